package dashboard

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// issue 15.11: the purge of a Service Bus entity deletes every item, the
// locked, scheduled and deferred ones too (their holders' settlements then
// fail: core's TestPurgeAllRemovesLockedScheduledAndDeferredItems and
// servicebus's TestPurgedLockedMessageCannotBeCompleted); a RabbitMQ
// queue's purge deletes the ready messages only, as queue.purge does, and
// its button says so.
func TestPurgeDeletesLockedItemsExceptRabbitMQsUnacked(t *testing.T) {
	f := MustFixture(t)
	sb := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	f.MustCreate(t, core.Entity{EntityKey: sb, Kind: "queue"})
	for _, b := range []string{"locked", "deferred", "active"} {
		f.MustEnqueue(t, sb, core.Item{Body: []byte(b)})
	}
	f.MustEnqueue(t, sb, core.Item{Body: []byte("scheduled"), State: core.Scheduled, ScheduledAt: t0.Add(time.Hour)})
	if _, found, err := f.engine.Receive(t0, sb, t0.Add(time.Minute)); !found || err != nil {
		t.Fatal(found, err)
	}
	it, found, err := f.engine.Receive(t0, sb, t0.Add(time.Minute))
	if !found || err != nil {
		t.Fatal(found, err)
	}
	if _, err := f.engine.Defer(t0, sb, it.Seq); err != nil {
		t.Fatal(err)
	}
	rb := core.EntityKey{Protocol: core.RabbitMQ, Name: "/jobs"}
	f.MustCreate(t, core.Entity{EntityKey: rb, Kind: "queue"})
	f.MustEnqueue(t, rb, core.Item{Body: []byte("unacked")})
	f.MustEnqueue(t, rb, core.Item{Body: []byte("ready")})
	if _, found, err := f.engine.Receive(t0, rb, time.Time{}); !found || err != nil {
		t.Fatal(found, err)
	}

	f.mustPage(t, "/entity?protocol=servicebus&name=q", `id="purge">Purge</button>`,
		"the locked, scheduled and deferred ones too? A receiver holding a lock then fails to settle it (lock lost).")
	f.mustPage(t, "/entity?protocol=rabbitmq&name=/jobs", `id="purge">Purge ready messages</button>`,
		"Unacknowledged messages stay with their consumers, as RabbitMQ's queue.purge leaves them.")

	f.check(t, call{"POST", "/api/entities/servicebus/q/purge", "", 200, `{"purged":4}`})
	f.check(t, call{"GET", "/api/entities/servicebus/q/items", "", 200, `[]`})
	f.check(t, call{"POST", "/api/entities/rabbitmq//jobs/purge", "", 200, `{"purged":1}`})
	c, _, err := f.engine.Counts(t0, rb)
	if err != nil || c.Active != 0 || c.Locked != 1 {
		t.Errorf("the RabbitMQ queue after its purge: %+v, %v; want its unacked message only", c, err)
	}
}

package adapters_test

// Regression scenarios: each once showed a divergence between lapse and
// SEMANTICS.md or the real service, now mended.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// CO-1 and CO-7 count a Cosmos item's TTL from `_ts`, the last modification
// in whole seconds: an item written at hh:mm:00.700 with ttl 10 is gone at
// hh:mm:10, not 700 ms later (the policy's BaseResolution).
func TestCosmosTTLCountsFromWholeSecondTs_CO1(t *testing.T) {
	s := MustScenario(t)
	c := s.MustContainer("c", json.Number("-1"))
	s.advance(700 * time.Millisecond)
	it := s.MustUpsert(c, `{"id":"a","ttl":10}`)
	// _ts = t0 (t0 falls on a whole second), so expiry = _ts + 10 s.
	check(t, "expiry from _ts", "10s CO-3", expiry(it))
	s.advance(10*time.Second - 700*time.Millisecond)
	check(t, "point read at _ts + ttl", "", s.read(c, "a"))
}

// RB-8 with RB-10: applying a policy that sets `expires` to a queue starts
// the queue TTL from that moment in RabbitMQ (a policy change arms a fresh
// timer of the full `expires`), so a queue unused for an hour is not deleted
// the instant the policy applies: a new idle TTL restarts the lease.
func TestRabbitPolicyExpiresCountsFromWhenItApplies_RB8_RB10(t *testing.T) {
	s := MustScenario(t)
	q := s.MustRabbitQueue("q", nil, nil, nil)
	s.advance(time.Hour)
	pol := []adapters.RabbitPolicy{rabbitPolicy("p", 0, map[string]any{"expires": float64(300000)})}
	s.MustUpdatePolicy(q, adapters.RabbitQueueEffective("/", "q", nil, pol, nil).Policy())
	if !s.exists(q) {
		t.Fatalf("queue deleted the moment the expires policy applied: %v", s.events(q))
	}
	s.advance(5 * time.Minute)
	s.wantEvents(q, "deleted-idle RB-8 0 due 1h5m at 1h5m")
}

// SB-4 does not say what a past scheduled time means: a message scheduled
// for a time already past on lapse's clock (a client's UtcNow + 1 min after
// the clock was advanced a day) is enqueued at once with its enqueue time
// the arrival, as Service Bus enqueues such a message at the tail as it
// arrives (Azure/azure-service-bus#347), so a 10 min TTL gives it 10 minutes.
func TestServiceBusPastScheduledTimeEnqueuesNow_SB4(t *testing.T) {
	s := MustScenario(t)
	q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(time.Hour))
	s.advance(day)
	m := s.MustEnqueue(q, core.Item{Body: []byte("m"), TTL: core.After(10 * time.Minute), State: core.Scheduled, ScheduledAt: t0.Add(time.Minute)})
	check(t, "enqueued, due", []string{"1d", "1d10m"}, []string{since(m.EnqueuedAt), since(m.DueAt)})
	check(t, "received", "m", string(s.MustReceive(q, time.Minute).Body))
}

package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

// rule: RB-14 — a durable priority queue delivers by priority after a
// restart as before it: highest first, a priority above x-max-priority as
// the maximum, none as 0, publish order within one; a message requeued
// before the restart keeps its priority and its place.
func TestPriorityQueue_RB14_OrderSurvivesRestart(t *testing.T) {
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	ch := f.MustChannel()
	if _, err := ch.QueueDeclare("prio", true, false, false, false, amqp.Table{"x-max-priority": int32(10)}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		body string
		p    uint8
	}{{"p3-a", 3}, {"p6", 6}, {"p3-b", 3}, {"none", 0}, {"p10", 10}, {"p200", 200}} {
		MustPublish(t, ch, "", "prio", amqp.Publishing{Body: []byte(m.body), Priority: m.p, DeliveryMode: amqp.Persistent})
	}
	d, ok, err := ch.Get("prio", false)
	if err != nil || !ok || string(d.Body) != "p10" {
		t.Fatalf("first get: %q %v %v, want p10", d.Body, ok, err)
	}
	if err := d.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	sync(t, ch)
	f.close()

	g := MustServerOn(t, store, t0.Add(time.Minute))
	want := []string{"p10", "p200", "p6", "p3-a", "p3-b", "none"}
	if got := drain(t, g.MustChannel(), "prio"); !cmp.Equal(got, want) {
		t.Fatalf("after the restart delivered %q, want %q", got, want)
	}
}

// rule: RB-14 — a dead letter moved back (Resubmit) to the priority
// queue it died in takes its priority there again: it goes before the
// lower-priority messages that wait.
func TestPriorityQueue_RB14_ResubmitKeepsPriority(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	withDLQ(t, ch, "prio", amqp.Table{"x-max-priority": int32(5)})
	MustPublish(t, ch, "", "prio", amqp.Publishing{Body: []byte("high"), Priority: 9})
	d, ok, err := ch.Get("prio", false)
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	if err := d.Reject(false); err != nil {
		t.Fatal(err)
	}
	MustPublish(t, ch, "", "prio", amqp.Publishing{Body: []byte("low"), Priority: 1})
	dead := f.items("/prio.dlq")
	if len(dead) != 1 {
		t.Fatalf("dead-letter queue holds %d messages", len(dead))
	}
	if _, _, err := f.e.Resubmit(f.clock.Now(), rbKey("/prio.dlq"), dead[0].Seq); err != nil {
		t.Fatal(err)
	}
	if got := drain(t, ch, "prio"); !cmp.Equal(got, []string{"high", "low"}) {
		t.Fatalf("delivered %q, want the resubmitted high-priority one first", got)
	}
}

package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// rawGetHeaders takes one message of queue with a raw basic.get and returns
// its headers, the tables nested in them in their order on the wire.
func rawGetHeaders(tb testing.TB, f *fixture, queue string) map[string]any {
	tb.Helper()
	c := MustRawOpen(tb, f, 0)
	c.send(1, &wire.ChannelOpen{})
	c.expect(&wire.ChannelOpenOk{})
	c.send(1, &wire.BasicGet{Queue: queue, NoAck: true})
	c.expect(&wire.BasicGetOk{})
	fr, err := c.r.ReadFrame()
	if err != nil || fr.Type != wire.FrameHeader {
		tb.Fatalf("frame %+v, %v: want the content header", fr, err)
	}
	h, err := wire.ReadContentHeader(fr.Payload)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := wire.DecodePropertiesOrdered(h.Props)
	if err != nil {
		tb.Fatal(err)
	}
	return p.Headers
}

// fieldNames returns the names of an x-death entry in their order.
func fieldNames(tb testing.TB, entry any) []string {
	tb.Helper()
	t, ok := entry.(wire.OrderedTable)
	if !ok {
		tb.Fatalf("x-death entry %T, want a table", entry)
	}
	var out []string
	for _, f := range t {
		out = append(out, f.Key)
	}
	return out
}

// rule: RB-12 — issue 13.8: a death in a second queue adds an x-death entry
// with its fields sorted by name, and the first entry, which it leaves as
// it is, keeps the order it was written in (count, reason, queue, time,
// exchange, routing-keys, original-expiration), as RabbitMQ 3.10 does.
func TestXDeathOlderEntryKeepsItsFieldOrder_RB12(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "dlq", nil)
	MustDeclare(t, ch, "q2", amqp.Table{"x-message-ttl": int32(100), "x-dead-letter-exchange": "",
		"x-dead-letter-routing-key": "dlq"})
	MustDeclare(t, ch, "q1", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q2"})
	MustPublish(t, ch, "", "q1", amqp.Publishing{Body: []byte("m"), Expiration: "100"})
	f.advance(100 * time.Millisecond)
	f.advance(100 * time.Millisecond)

	deaths, _ := rawGetHeaders(t, f, "dlq")["x-death"].([]any)
	if len(deaths) != 2 {
		t.Fatalf("x-death %v, want two entries", deaths)
	}
	want := [][]string{
		{"count", "exchange", "queue", "reason", "routing-keys", "time"},
		{"count", "reason", "queue", "time", "exchange", "routing-keys", "original-expiration"},
	}
	for i, d := range deaths {
		if diff := cmp.Diff(want[i], fieldNames(t, d)); diff != "" {
			t.Errorf("entry %d's fields (-want +got):\n%s", i, diff)
		}
	}
}

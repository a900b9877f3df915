package rabbitmq_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	amqp "github.com/rabbitmq/amqp091-go"
)

// These tests prove RB-15, the delayed-message exchange of the community
// plugin, against its documented behaviour: Debian's RabbitMQ ships no
// such plugin to record transcripts from.

// mustDelayedExchange declares delayed exchange name routing as kind, and
// queue q bound to it by key.
func mustDelayedExchange(tb testing.TB, ch *amqp.Channel, name, kind string, durable bool) {
	tb.Helper()
	if err := ch.ExchangeDeclare(name, "x-delayed-message", durable, false, false, false,
		amqp.Table{"x-delayed-type": kind}); err != nil {
		tb.Fatal(err)
	}
}

func mustBind(tb testing.TB, ch *amqp.Channel, q, key, x string) {
	tb.Helper()
	if err := ch.QueueBind(q, key, x, false, nil); err != nil {
		tb.Fatal(err)
	}
}

func delayed(body string, delay any) amqp.Publishing {
	return amqp.Publishing{Body: []byte(body), Headers: amqp.Table{"x-delay": delay}}
}

// rule: RB-15
func TestDelayedExchange_RB15_HeldUntilTheClockPassesTheDelay(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dx", "direct", false)
	MustDeclare(t, ch, "q", nil)
	mustBind(t, ch, "q", "k", "dx")
	MustPublish(t, ch, "dx", "k", delayed("late", int32(5000)))

	// Held, it shows as an item of the exchange with its due time.
	items, err := f.e.Items(f.clock.Now(), core.EntityKey{Protocol: core.RabbitMQ, Name: "exchange:/dx"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || !items[0].DueAt.Equal(t0.Add(5*time.Second)) || items[0].Rule != "RB-15" {
		t.Fatalf("held items %+v, want one due at %v by RB-15", items, t0.Add(5*time.Second))
	}
	f.advance(4999 * time.Millisecond)
	if n := count(t, ch, "q"); n != 0 {
		t.Fatalf("%d messages in the queue 1 ms before the delay is over", n)
	}
	f.advance(time.Millisecond)
	d, ok, err := ch.Get("q", true)
	if err != nil || !ok {
		t.Fatalf("no message once the delay is over (%v)", err)
	}
	// The plugin negates x-delay on release, so that no delayed exchange
	// holds the message again.
	if string(d.Body) != "late" || d.Headers["x-delay"] != int32(-5000) || d.Exchange != "dx" || d.RoutingKey != "k" {
		t.Fatalf("released %q from %q/%q with x-delay %#v", d.Body, d.Exchange, d.RoutingKey, d.Headers["x-delay"])
	}
	var released []core.Event
	for _, ev := range f.e.Events(core.EventQuery{}) {
		if ev.Action == core.ActionReleased {
			released = append(released, ev)
		}
	}
	if len(released) != 1 || released[0].Rule != "RB-15" || released[0].Entity != "exchange:/dx" ||
		!released[0].Due.Equal(t0.Add(5*time.Second)) || released[0].Reason != "hold ran out (own TTL 5s); passed on" {
		t.Fatalf("release events %+v", released)
	}
}

// rule: RB-15
func TestDelayedExchange_RB15_RoutedByTheBindingsAtRelease(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dx", "topic", false)
	MustDeclare(t, ch, "q", amqp.Table{"x-message-ttl": int32(1000)})
	mustBind(t, ch, "q", "gone.*", "dx")
	MustPublish(t, ch, "dx", "later.a", delayed("bound after", int64(2000)))
	MustPublish(t, ch, "dx", "gone.a", delayed("unbound before", int64(2000)))
	mustBind(t, ch, "q", "later.*", "dx") // routes as a topic exchange
	if err := ch.QueueUnbind("q", "gone.*", "dx", nil); err != nil {
		t.Fatal(err)
	}
	f.advance(2 * time.Second)
	if n := count(t, ch, "q"); n != 1 {
		t.Fatalf("%d messages after the release, want 1", n)
	}
	// The queue's TTL counts from the release.
	f.advance(999 * time.Millisecond)
	if got := drain(t, ch, "q"); !cmp.Equal(got, []string{"bound after"}) {
		t.Fatalf("released %q", got)
	}
}

// rule: RB-15
func TestDelayedExchange_RB15_NoOrNegativeDelayRoutesAtOnce(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dx", "fanout", false)
	MustDeclare(t, ch, "q", nil)
	mustBind(t, ch, "q", "", "dx")
	MustPublish(t, ch, "dx", "", amqp.Publishing{Body: []byte("no header")})
	for _, tc := range []struct {
		body  string
		delay any
	}{
		{"negative", int32(-1000)},
		{"zero", int8(0)},
		{"over 2^32-1 ms", int64(1) << 32},
		{"not an integer", true},
	} {
		MustPublish(t, ch, "dx", "", delayed(tc.body, tc.delay))
	}
	if got := drain(t, ch, "q"); !cmp.Equal(got, []string{"no header", "negative", "zero", "over 2^32-1 ms", "not an integer"}) {
		t.Fatalf("routed at once: %q", got)
	}
	// A string or a float is read as an integer, as the plugin reads it.
	MustPublish(t, ch, "dx", "", delayed("string", "1500"))
	MustPublish(t, ch, "dx", "", delayed("float", 1500.9))
	if n := count(t, ch, "q"); n != 0 {
		t.Fatalf("%d messages routed at once, want them held", n)
	}
	f.advance(1500 * time.Millisecond)
	if got := drain(t, ch, "q"); !cmp.Equal(got, []string{"string", "float"}) {
		t.Fatalf("released %q", got)
	}
}

// rule: RB-15
func TestDelayedExchange_RB15_HeldMessagesSurviveARestart(t *testing.T) {
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dx", "direct", true)
	if _, err := ch.QueueDeclare("q", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	mustBind(t, ch, "q", "k", "dx")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 2))
	// The plugin keeps every delayed message on disc, transient or not.
	MustPublish(t, ch, "dx", "k", delayed("due while down", int32(10000)))
	p := delayed("due after", int32(60000))
	p.DeliveryMode = amqp.Persistent
	MustPublish(t, ch, "dx", "k", p)
	for range 2 {
		if c := <-confirms; !c.Ack {
			t.Fatalf("publish %d nacked", c.DeliveryTag)
		}
	}
	f.close()

	g := MustServerOn(t, store, t0.Add(30*time.Second))
	gch := g.MustChannel()
	if got := drain(t, gch, "q"); !cmp.Equal(got, []string{"due while down"}) {
		t.Fatalf("released at recovery: %q", got)
	}
	g.advance(29 * time.Second)
	if n := count(t, gch, "q"); n != 0 {
		t.Fatalf("%d messages 1 s before the delay is over", n)
	}
	g.advance(time.Second)
	if got := drain(t, gch, "q"); !cmp.Equal(got, []string{"due after"}) {
		t.Fatalf("released after the restart: %q", got)
	}
}

// rule: RB-15
func TestDelayedExchange_RB15_DelayedTypeIsRequired(t *testing.T) {
	f := MustServer(t)
	for _, tc := range []struct {
		args   amqp.Table
		code   int
		reason string
	}{
		{nil, 406, "PRECONDITION_FAILED - Invalid argument, 'x-delayed-type' must be an existing exchange type"},
		{amqp.Table{"x-delayed-type": int32(1)}, 406, "PRECONDITION_FAILED - Invalid argument, 'x-delayed-type' must be an existing exchange type"},
		{amqp.Table{"x-delayed-type": "x-delayed-message"}, 406, "PRECONDITION_FAILED - Invalid argument, 'x-delayed-message' can't be used for 'x-delayed-type'"},
		{amqp.Table{"x-delayed-type": "nope"}, 503, "COMMAND_INVALID - unknown exchange type 'nope'"},
	} {
		ch := f.MustChannel()
		err := ch.ExchangeDeclare("dx", "x-delayed-message", false, false, false, false, tc.args)
		if err == nil {
			t.Fatalf("declare with %v: accepted", tc.args)
		}
		if e := closeErr(t, err); e.Code != tc.code || e.Reason != tc.reason {
			t.Errorf("declare with %v: %d %q, want %d %q", tc.args, e.Code, e.Reason, tc.code, tc.reason)
		}
	}
	ch := f.MustChannel()
	if err := ch.ExchangeDeclarePassive("dx", "x-delayed-message", false, false, false, false, nil); err == nil {
		t.Fatal("a refused declare made the exchange")
	}
}

// rule: RB-15. The plugin acks a delayed publish once it has stored it;
// since the exchange routes it nowhere at publish, a mandatory one is
// returned (312 NO_ROUTE) and still delivered when its delay is over, and
// an alternate exchange gets a copy at once (so that a mandatory one is
// not returned).
func TestDelayedExchange_RB15_ConfirmedAtPublishAndReturnedIfMandatory(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dx", "direct", false)
	if err := ch.ExchangeDeclare("dxa", "x-delayed-message", false, false, false, false,
		amqp.Table{"x-delayed-type": "direct", "alternate-exchange": "ae"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare("ae", "fanout", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "q", nil)
	MustDeclare(t, ch, "unrouted", nil)
	mustBind(t, ch, "q", "k", "dx")
	mustBind(t, ch, "q", "k", "dxa")
	mustBind(t, ch, "unrouted", "", "ae")
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 2))
	returns := ch.NotifyReturn(make(chan amqp.Return, 2))
	for _, x := range []string{"dx", "dxa"} {
		if err := ch.PublishWithContext(context.Background(), x, "k", true, false, delayed(x, int32(1000))); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case c := <-confirms:
			if !c.Ack {
				t.Fatalf("publish %d nacked", c.DeliveryTag)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no confirm before the delay is over")
		}
	}
	select {
	case r := <-returns:
		if r.ReplyCode != 312 || r.ReplyText != "NO_ROUTE" || r.Exchange != "dx" {
			t.Fatalf("returned %d %s from %q", r.ReplyCode, r.ReplyText, r.Exchange)
		}
	default:
		t.Fatal("no basic.return before the confirms")
	}
	select {
	case r := <-returns:
		t.Fatalf("returned from %q too", r.Exchange)
	default:
	}
	if got := drain(t, ch, "unrouted"); !cmp.Equal(got, []string{"dxa"}) {
		t.Fatalf("alternate exchange got %q", got)
	}
	f.advance(time.Second)
	if got := drain(t, ch, "q"); !cmp.Equal(got, []string{"dx", "dxa"}) {
		t.Fatalf("released %q", got)
	}
}

// rule: RB-15
func TestDelayedExchange_RB15_DeletingTheExchangeDropsItsMessages(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dx", "direct", false)
	MustDeclare(t, ch, "q", nil)
	mustBind(t, ch, "q", "k", "dx")
	MustPublish(t, ch, "dx", "k", delayed("m", int32(1000)))
	if err := ch.ExchangeDelete("dx", false, false); err != nil {
		t.Fatal(err)
	}
	mustDelayedExchange(t, ch, "dx", "direct", false)
	mustBind(t, ch, "q", "k", "dx")
	f.advance(time.Second)
	if n := count(t, ch, "q"); n != 0 {
		t.Fatalf("%d messages released from a deleted exchange", n)
	}
}

// rule: RB-15. The management API lists the exchange with its type and
// arguments, and the plugin's messages_delayed.
func TestDelayedExchange_RB15_ManagementShowsTheExchange(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	a.must(http.MethodPut, "/api/exchanges/%2F/dx", map[string]any{"type": "x-delayed-message",
		"arguments": map[string]any{"x-delayed-type": "fanout"}}, http.StatusCreated)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", nil)
	mustBind(t, ch, "q", "", "dx")
	MustPublish(t, ch, "dx", "", delayed("m", int32(1000)))
	want := map[string]any{"type": "x-delayed-message", "arguments": map[string]any{"x-delayed-type": "fanout"},
		"messages_delayed": n("1")}
	if diff := cmp.Diff(want, obj(t, a.get("/api/exchanges/%2F/dx"), "type", "arguments", "messages_delayed")); diff != "" {
		t.Fatalf("GET exchange (-want +got):\n%s", diff)
	}
	f.advance(time.Second)
	list, _ := a.get("/api/exchanges/%2F?columns=name,messages_delayed").([]any)
	var got []map[string]any
	for _, x := range list {
		if o := obj(t, x, "name", "messages_delayed"); o["name"] == "dx" {
			got = append(got, o)
		}
	}
	if diff := cmp.Diff([]map[string]any{{"name": "dx", "messages_delayed": n("0")}}, got); diff != "" {
		t.Fatalf("exchange list after the release (-want +got):\n%s", diff)
	}
	a.must(http.MethodPut, "/api/exchanges/%2F/bad", map[string]any{"type": "x-delayed-message"}, http.StatusBadRequest)
}

// rule: RB-15. A dead letter that carries an x-delay and whose
// dead-letter exchange is a delayed one is held there too, as the plugin
// holds whatever its exchange routes.
func TestDelayedExchange_RB15_DeadLetterExchangeHolds(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	mustDelayedExchange(t, ch, "dlx", "fanout", false)
	MustDeclare(t, ch, "dead", nil)
	mustBind(t, ch, "dead", "", "dlx")
	MustDeclare(t, ch, "q", amqp.Table{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "dlx"})
	MustPublish(t, ch, "", "q", delayed("m", int32(3000)))
	f.advance(time.Second)
	if n := count(t, ch, "dead"); n != 0 {
		t.Fatalf("%d dead letters routed at once, want them held", n)
	}
	f.advance(3 * time.Second)
	if got := drain(t, ch, "dead"); !cmp.Equal(got, []string{"m"}) {
		t.Fatalf("released %q", got)
	}
}

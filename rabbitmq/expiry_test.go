package rabbitmq_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// These tests prove the RB rules end to end: amqp091-go against the
// front-end, the clock advanced instead of waiting.

// withDLQ declares queue name with args plus a dead-letter exchange "" and
// routing key name+".dlq", and that dead-letter queue.
func withDLQ(tb testing.TB, ch *amqp.Channel, name string, args amqp.Table) string {
	tb.Helper()
	dlq := name + ".dlq"
	MustDeclare(tb, ch, dlq, nil)
	if args == nil {
		args = amqp.Table{}
	}
	args["x-dead-letter-exchange"] = ""
	args["x-dead-letter-routing-key"] = dlq
	MustDeclare(tb, ch, name, args)
	return dlq
}

// rule: RB-1, RB-3
func TestPerQueueTTL_RB1_RB3(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	// Any integer width the client picks is a TTL (RB-1).
	for i, ttl := range []any{int8(60), int16(30000), int32(60000), int64(60000), uint8(60), uint16(60000), uint32(60000)} {
		name := fmt.Sprintf("q%d", i)
		dlq := withDLQ(t, ch, name, amqp.Table{"x-message-ttl": ttl})
		MustPublish(t, ch, "", name, amqp.Publishing{Body: []byte("m")})
		want := 60 * time.Second
		switch ttl {
		case int8(60), uint8(60):
			want = 60 * time.Millisecond
		case int16(30000):
			want = 30 * time.Second
		}
		f.advance(want - time.Millisecond)
		if n := count(t, ch, name); n != 1 {
			t.Fatalf("%T TTL: %d messages 1 ms before expiry, want 1", ttl, n)
		}
		f.advance(time.Millisecond)
		// RB-3: at its expiry it is gone and never delivered.
		if got := drain(t, ch, name); got != nil {
			t.Fatalf("%T TTL: delivered %q after expiry", ttl, got)
		}
		if got := drain(t, ch, dlq); !cmp.Equal(got, []string{"m"}) {
			t.Fatalf("%T TTL: dead-lettered %q", ttl, got)
		}
	}
}

// rule: RB-2
func TestCopiesAgeIndependently_RB2(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	if err := ch.ExchangeDeclare("fan", "fanout", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for name, ttl := range map[string]int32{"short": 60000, "long": 3600000} {
		MustDeclare(t, ch, name, amqp.Table{"x-message-ttl": ttl})
		if err := ch.QueueBind(name, "", "fan", false, nil); err != nil {
			t.Fatal(err)
		}
	}
	MustPublish(t, ch, "fan", "", amqp.Publishing{Body: []byte("m")})
	f.advance(time.Minute)
	if s, l := count(t, ch, "short"), count(t, ch, "long"); s != 0 || l != 1 {
		t.Fatalf("after 1m: short %d long %d, want 0 and 1", s, l)
	}
}

// rule: RB-3
func TestExpiredMessageNeverDelivered_RB3(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", amqp.Table{"x-message-ttl": int32(1000)})
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("first")})
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("second")})
	msgs, err := ch.Consume("q", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := receive(t, msgs, 1)[0]
	f.advance(time.Second) // "second" expires while the consumer has no room
	first.Ack(false)
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("third")})
	if d := receive(t, msgs, 1)[0]; string(d.Body) != "third" {
		t.Fatalf("delivered %q after the expiry, want third", d.Body)
	}
}

// rule: RB-4
func TestTTLZero_RB4(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	for _, c := range []struct {
		name, expiration string
		args             amqp.Table
	}{
		{"queue-ttl-0", "", amqp.Table{"x-message-ttl": int32(0)}},
		{"expiration-0", "0", nil},
	} {
		dlq := withDLQ(t, ch, c.name, c.args)
		// No consumer: expired on arrival, dead-lettered, no basic.return.
		returns := ch.NotifyReturn(make(chan amqp.Return, 1))
		if err := ch.PublishWithContext(t.Context(), "", c.name, true, false,
			amqp.Publishing{Body: []byte("nobody"), Expiration: c.expiration}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, ch, c.name); n != 0 {
			t.Fatalf("%s: %d messages kept", c.name, n)
		}
		if got := drain(t, ch, dlq); !cmp.Equal(got, []string{"nobody"}) {
			t.Fatalf("%s: dead-lettered %q", c.name, got)
		}
		select {
		case r := <-returns:
			t.Fatalf("%s: basic.return %v", c.name, r)
		default:
		}
		// A consumer with room takes it at once.
		cch := f.MustChannel()
		msgs, err := cch.Consume(c.name, "", false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		MustPublish(t, ch, "", c.name, amqp.Publishing{Body: []byte("taken"), Expiration: c.expiration})
		if d := receive(t, msgs, 1)[0]; string(d.Body) != "taken" {
			t.Fatalf("%s: delivered %q", c.name, d.Body)
		}
		cch.Close()
	}
}

// rule: RB-5
func TestPerMessageTTLAndMinimum_RB5(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	dlq := withDLQ(t, ch, "q", amqp.Table{"x-message-ttl": int32(3000)})
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("own-1s"), Expiration: "1000"})
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("own-5s-capped-3s"), Expiration: "5000"})
	f.advance(time.Second)
	if got := drain(t, ch, dlq); !cmp.Equal(got, []string{"own-1s"}) {
		t.Fatalf("after 1s dead-lettered %q", got)
	}
	f.advance(2 * time.Second)
	if got := drain(t, ch, dlq); !cmp.Equal(got, []string{"own-5s-capped-3s"}) {
		t.Fatalf("after 3s dead-lettered %q", got)
	}
	// The expiration property is a string of milliseconds, read as RabbitMQ
	// reads it; a bad one closes the channel (RB-11).
	for exp, want := range map[string]string{
		"abc":   "PRECONDITION_FAILED - invalid expiration 'abc': no_integer",
		"1.5":   "PRECONDITION_FAILED - invalid expiration '1.5': {leftover_string,\".5\"}",
		"-1":    "PRECONDITION_FAILED - invalid expiration '-1': {value_negative,-1}",
		"+100":  "",
		"007":   "",
		"0":     "",
		" 100":  "PRECONDITION_FAILED - invalid expiration ' 100': no_integer",
		"100 ":  "PRECONDITION_FAILED - invalid expiration '100 ': {leftover_string,\" \"}",
		"0x10":  "PRECONDITION_FAILED - invalid expiration '0x10': {leftover_string,\"x10\"}",
		"60000": "",
	} {
		pch := f.MustChannel()
		closed := pch.NotifyClose(make(chan *amqp.Error, 1))
		if err := pch.PublishWithContext(t.Context(), "", "q", false, false, amqp.Publishing{Body: []byte("x"), Expiration: exp}); err != nil {
			t.Fatal(err)
		}
		_, err := pch.QueueDeclarePassive("q", false, false, false, false, nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("expiration %q refused: %v", exp, err)
		case want != "":
			e := <-closed
			if e == nil || e.Code != 406 || e.Reason != want {
				t.Errorf("expiration %q: closed with %v, want 406 %s", exp, e, want)
			}
		}
	}
}

// rule: RB-6
func TestRequeueKeepsOriginalExpiry_RB6(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	dlq := withDLQ(t, ch, "q", amqp.Table{"x-message-ttl": int32(10000)})
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("m")})
	cch := f.MustChannel()
	msgs, err := cch.Consume("q", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := receive(t, msgs, 1)[0]
	f.advance(7 * time.Second)
	if err := d.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	again := receive(t, msgs, 1)[0]
	if !again.Redelivered {
		t.Fatal("requeued message not marked redelivered")
	}
	// Closing the channel with it unacked requeues it too, still with the
	// expiry of its first enqueue.
	cch.Close()
	f.advance(3 * time.Second)
	if n := count(t, ch, "q"); n != 0 {
		t.Fatalf("%d messages 10 s after the publish", n)
	}
	if got := drain(t, ch, dlq); !cmp.Equal(got, []string{"m"}) {
		t.Fatalf("dead-lettered %q", got)
	}
}

// rule: RB-7
func TestPerMessageTTLExpiresOnlyAtTheHead_RB7(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", nil)
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("long"), Expiration: "60000"})
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("short"), Expiration: "100"})
	f.advance(600 * time.Millisecond)
	if n := count(t, ch, "q"); n != 2 {
		t.Fatalf("%d messages, want 2: the expired one waits behind the live one", n)
	}
	if got := drain(t, ch, "q"); !cmp.Equal(got, []string{"long"}) {
		t.Fatalf("got %q, want only the live message", got)
	}
	if n := count(t, ch, "q"); n != 0 {
		t.Fatalf("%d messages after the head moved", n)
	}
}

// rule: RB-8
func TestQueueTTL_RB8(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	args := func() amqp.Table { return amqp.Table{"x-expires": int32(600)} }
	for _, name := range []string{"idle", "redeclared", "passive", "got", "consumed", "published"} {
		MustDeclare(t, ch, name, args())
	}
	cch := f.MustChannel()
	if _, err := cch.Consume("consumed", "", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 5; step++ {
		f.advance(300 * time.Millisecond)
		MustDeclare(t, ch, "redeclared", args())
		if _, err := ch.QueueDeclarePassive("passive", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ch.Get("got", true); err != nil {
			t.Fatal(err)
		}
		MustPublish(t, ch, "", "published", amqp.Publishing{Body: []byte("does not renew")})
	}
	alive := map[string]bool{}
	for _, name := range []string{"idle", "redeclared", "passive", "got", "consumed", "published"} {
		pch := f.MustChannel()
		_, err := pch.QueueDeclarePassive(name, false, false, false, false, nil)
		alive[name] = err == nil
		if err != nil {
			if e := closeErr(t, err); e.Code != 404 || e.Reason != "NOT_FOUND - no queue '"+name+"' in vhost '/'" {
				t.Errorf("%s: %v", name, e)
			}
		}
	}
	want := map[string]bool{"idle": false, "redeclared": true, "passive": true, "got": true, "consumed": true, "published": false}
	if d := cmp.Diff(want, alive); d != "" {
		t.Fatalf("queues alive after 1.5 s (-want +got):\n%s", d)
	}
	// The timer starts when the last consumer goes.
	cch.Close()
	f.advance(599 * time.Millisecond)
	if _, err := ch.QueueDeclarePassive("consumed", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	f.advance(600 * time.Millisecond)
	pch := f.MustChannel()
	if _, err := pch.QueueDeclarePassive("consumed", false, false, false, false, nil); err == nil {
		t.Fatal("queue alive 600 ms after its last consumer left and its last declare")
	}
}

// rule: RB-9
func TestDeadLetterReasons_RB9(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	dlq := withDLQ(t, ch, "q", amqp.Table{"x-max-length": int32(2)})
	for _, b := range []string{"a", "b", "c"} {
		MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte(b)})
	}
	d, ok, err := ch.Get("q", false)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := d.Reject(false); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m, ok, err := ch.Get(dlq, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		death := m.Headers["x-death"].([]any)[0].(amqp.Table)
		got = append(got, fmt.Sprintf("%s %s", m.Body, death["reason"]))
	}
	if d := cmp.Diff([]string{"a maxlen", "b rejected"}, got); d != "" {
		t.Fatalf("dead letters (-want +got):\n%s", d)
	}
}

// rule: RB-10
func TestPolicyPrecedence_RB10(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	for _, x := range []string{"A", "P"} {
		if err := ch.ExchangeDeclare(x, "fanout", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		MustDeclare(t, ch, "to-"+x, nil)
		if err := ch.QueueBind("to-"+x, "", x, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.s.PutPolicy("/", adapters.RabbitPolicy{Name: "user", Pattern: "^pol\\.", ApplyTo: "queues",
		Definition: map[string]any{"message-ttl": 2000.0, "dead-letter-exchange": "P"}}, false))
	must(f.s.PutPolicy("/", adapters.RabbitPolicy{Name: "op", Pattern: "^pol\\.", ApplyTo: "queues",
		Definition: map[string]any{"message-ttl": 1500.0}}, true))
	MustDeclare(t, ch, "pol.a", amqp.Table{"x-message-ttl": int32(500), "x-dead-letter-exchange": "A"})
	MustDeclare(t, ch, "pol.b", amqp.Table{"x-message-ttl": int32(5000)})
	MustDeclare(t, ch, "pol.c", nil)
	for _, q := range []string{"pol.a", "pol.b", "pol.c"} {
		MustPublish(t, ch, "", q, amqp.Publishing{Body: []byte(q)})
	}
	f.advance(500 * time.Millisecond)
	if got := drain(t, ch, "to-A"); !cmp.Equal(got, []string{"pol.a"}) {
		t.Fatalf("at 500 ms DLX A got %q", got)
	}
	f.advance(999 * time.Millisecond)
	if got := drain(t, ch, "to-P"); got != nil {
		t.Fatalf("at 1499 ms DLX P got %q", got)
	}
	f.advance(time.Millisecond)
	// Both expire at 1.5 s; which goes first is not defined.
	if got := drain(t, ch, "to-P"); !cmp.Equal(got, []string{"pol.b", "pol.c"}, cmpopts.SortSlices(func(a, b string) bool { return a < b })) {
		t.Fatalf("at 1.5 s DLX P got %q", got)
	}
	// A bad policy is refused with RabbitMQ's reason.
	err := f.s.PutPolicy("/", adapters.RabbitPolicy{Name: "bad", Pattern: ".*",
		Definition: map[string]any{"message-ttl": -5.0}}, false)
	if core.ErrorMessage(err) != "Validation failed\n\n-5 is not a valid message TTL\n" {
		t.Fatalf("bad policy: %q", core.ErrorMessage(err))
	}
}

// rule: RB-11
func TestArgumentValidation_RB11(t *testing.T) {
	f := MustServer(t)
	for _, c := range []struct {
		name string
		args amqp.Table
		want string
	}{
		{"negative", amqp.Table{"x-message-ttl": int32(-1)}, "PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': {value_negative,-1}"},
		{"string", amqp.Table{"x-message-ttl": "1000"}, "PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': \"expected integer, got longstr\""},
		{"float", amqp.Table{"x-message-ttl": 1.5}, "PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'q' in vhost '/': \"expected integer, got double\""},
		{"expires0", amqp.Table{"x-expires": int32(0)}, "PRECONDITION_FAILED - invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}"},
		{"dlrkNoDlx", amqp.Table{"x-dead-letter-routing-key": "k"}, "PRECONDITION_FAILED - invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': routing_key_but_no_dlx_defined"},
		{"dlxType", amqp.Table{"x-dead-letter-exchange": int32(5)}, "PRECONDITION_FAILED - invalid type 'signedint' for arg 'x-dead-letter-exchange' in queue 'q' in vhost '/'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := f.MustChannel()
			_, err := ch.QueueDeclare("q", false, false, false, false, c.args)
			if e := closeErr(t, err); e.Code != 406 || e.Reason != c.want {
				t.Fatalf("got %d %q\nwant 406 %q", e.Code, e.Reason, c.want)
			}
		})
	}
	// Redeclaring: the same number in another width is equivalent, another
	// value or none is not.
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", amqp.Table{"x-message-ttl": int32(1000)})
	MustDeclare(t, ch, "q", amqp.Table{"x-message-ttl": int64(1000)})
	MustDeclare(t, ch, "q", amqp.Table{"x-message-ttl": int16(1000)})
	for _, c := range []struct {
		args amqp.Table
		want string
	}{
		{amqp.Table{"x-message-ttl": int32(2000)}, "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received '2000' but current is '1000'"},
		{nil, "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received none but current is the value '1000' of type 'signedint'"},
		{amqp.Table{"x-message-ttl": "1000"}, "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received '1000' but current is '1000'"},
	} {
		ch := f.MustChannel()
		_, err := ch.QueueDeclare("q", false, false, false, false, c.args)
		if e := closeErr(t, err); e.Code != 406 || e.Reason != c.want {
			t.Errorf("redeclare %v: got %d %q\nwant 406 %q", c.args, e.Code, e.Reason, c.want)
		}
	}
}

// rule: RB-12
func TestXDeathHeader_RB12(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	if err := ch.ExchangeDeclare("src", "direct", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	dlq := withDLQ(t, ch, "probe.src", amqp.Table{"x-message-ttl": int32(60000)})
	for _, k := range []string{"k1", "k2"} {
		if err := ch.QueueBind("probe.src", k, "src", false, nil); err != nil {
			t.Fatal(err)
		}
	}
	MustPublish(t, ch, "src", "k1", amqp.Publishing{Body: []byte("m"), Expiration: "100",
		Headers: amqp.Table{"CC": []any{"k2"}, "BCC": []any{"nowhere"}}})
	f.advance(100 * time.Millisecond)
	d, ok, err := ch.Get(dlq, true)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if d.Expiration != "" {
		t.Errorf("expiration %q kept after dead-lettering", d.Expiration)
	}
	// With a dead-letter routing key the CC header goes too; BCC never
	// reaches a queue.
	want := amqp.Table{
		"x-death": []any{amqp.Table{"count": int64(1), "reason": "expired", "queue": "probe.src",
			"time": t0.Add(100 * time.Millisecond).Truncate(time.Second), "exchange": "src",
			"routing-keys": []any{"k1", "k2"}, "original-expiration": "100"}},
		"x-first-death-reason":   "expired",
		"x-first-death-queue":    "probe.src",
		"x-first-death-exchange": "src",
	}
	if diff := cmp.Diff(want, d.Headers); diff != "" {
		t.Fatalf("headers (-want +got):\n%s", diff)
	}
	if d.Exchange != "" || d.RoutingKey != dlq {
		t.Fatalf("dead letter came through %q %q", d.Exchange, d.RoutingKey)
	}
}

// rule: RB-12
func TestDeadLetterCycles_RB12(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	// A(ttl) -> B(ttl) -> A: dropped after one lap.
	MustDeclare(t, ch, "cyc.a", amqp.Table{"x-message-ttl": int32(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "cyc.b"})
	MustDeclare(t, ch, "cyc.b", amqp.Table{"x-message-ttl": int32(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "cyc.a"})
	MustPublish(t, ch, "", "cyc.a", amqp.Publishing{Body: []byte("m")})
	f.advance(100 * time.Millisecond)
	if a, b := count(t, ch, "cyc.a"), count(t, ch, "cyc.b"); a != 0 || b != 1 {
		t.Fatalf("after one expiry a=%d b=%d", a, b)
	}
	f.advance(100 * time.Millisecond)
	if a, b := count(t, ch, "cyc.a"), count(t, ch, "cyc.b"); a != 0 || b != 0 {
		t.Fatalf("the cycle was not broken: a=%d b=%d", a, b)
	}
	// A rejection on the cycle lets it go round: reject -> expire -> reject.
	MustDeclare(t, ch, "rej.a", amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "rej.b"})
	MustDeclare(t, ch, "rej.b", amqp.Table{"x-message-ttl": int32(100), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "rej.a"})
	MustPublish(t, ch, "", "rej.a", amqp.Publishing{Body: []byte("m")})
	for lap := 1; lap <= 2; lap++ {
		d, ok, err := ch.Get("rej.a", false)
		if err != nil || !ok {
			t.Fatalf("lap %d: %v %v", lap, ok, err)
		}
		d.Reject(false)
		sync(t, ch)
		f.advance(100 * time.Millisecond)
	}
	d, ok, err := ch.Get("rej.a", true)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	deaths := d.Headers["x-death"].([]any)
	var got []string
	for _, x := range deaths {
		e := x.(amqp.Table)
		got = append(got, fmt.Sprintf("%s %s %d", e["queue"], e["reason"], e["count"]))
	}
	if diff := cmp.Diff([]string{"rej.b expired 2", "rej.a rejected 2"}, got); diff != "" {
		t.Fatalf("x-death after two laps (-want +got):\n%s", diff)
	}
}

// rule: RB-13
func TestExpiryDuringDowntime_RB13(t *testing.T) {
	store := core.NewMemStore()
	f := MustServerOn(t, store, t0)
	ch := f.MustChannel()
	if _, err := ch.QueueDeclare("dur.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("dur", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dur.dlq"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 2))
	MustPublish(t, ch, "", "dur", amqp.Publishing{Body: []byte("persistent"), DeliveryMode: amqp.Persistent})
	MustPublish(t, ch, "", "dur", amqp.Publishing{Body: []byte("transient")})
	for i := 0; i < 2; i++ {
		if c := <-confirms; !c.Ack {
			t.Fatalf("publish %d nacked", c.DeliveryTag)
		}
	}
	f.close()

	g := MustServerOn(t, store, t0.Add(2*time.Minute))
	gch := g.MustChannel()
	if n := count(t, gch, "dur"); n != 0 {
		t.Fatalf("%d messages left in the queue", n)
	}
	// The persistent message was dead-lettered during recovery; the transient
	// one did not survive the restart, as in RabbitMQ.
	if got := drain(t, gch, "dur.dlq"); !cmp.Equal(got, []string{"persistent"}) {
		t.Fatalf("dead-lettered at recovery: %q", got)
	}
}

// rule: RB-12 — the first x-death entry's fields go out in RabbitMQ's
// order (count, reason, queue, time, exchange, routing-keys,
// original-expiration), which amqp091-go's maps cannot show: this reads
// the raw content header.
func TestXDeathFieldOrderOnTheWire_RB12(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	dlq := withDLQ(t, ch, "q", nil)
	MustPublish(t, ch, "", "q", amqp.Publishing{Body: []byte("m"), Expiration: "100"})
	f.advance(100 * time.Millisecond)

	c := MustRawOpen(t, f, 0)
	c.send(1, &wire.ChannelOpen{})
	c.expect(&wire.ChannelOpenOk{})
	c.send(1, &wire.BasicGet{Queue: dlq, NoAck: true})
	c.expect(&wire.BasicGetOk{})
	fr, err := c.r.ReadFrame()
	if err != nil || fr.Type != wire.FrameHeader {
		t.Fatalf("frame %+v, %v: want the content header", fr, err)
	}
	h, err := wire.ReadContentHeader(fr.Payload)
	if err != nil {
		t.Fatal(err)
	}
	props := string(h.Props)
	last := -1
	for _, key := range []string{"x-death", "count", "reason", "queue", "time", "exchange", "routing-keys", "original-expiration"} {
		i := strings.Index(props, key)
		if i <= last {
			t.Fatalf("%q at %d, not after the field before it (%d): %q", key, i, last, props)
		}
		last = i
	}
}

// rule: RB-8. A queue deleted for being unused loses its bindings as any
// deleted queue does: an auto-delete exchange left without bindings goes
// with it.
func TestExpiredQueueTakesItsAutoDeleteExchange_RB8(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	if err := ch.ExchangeDeclare("ax", "direct", false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "bound", amqp.Table{"x-expires": int32(600)})
	if err := ch.QueueBind("bound", "k", "ax", false, nil); err != nil {
		t.Fatal(err)
	}
	f.advance(700 * time.Millisecond)
	pch := f.MustChannel()
	if _, err := pch.QueueDeclarePassive("bound", false, false, false, false, nil); err == nil {
		t.Fatal("the queue is alive after its x-expires")
	}
	pch = f.MustChannel()
	err := pch.ExchangeDeclarePassive("ax", "direct", false, true, false, false, nil)
	if err == nil {
		t.Fatal("the auto-delete exchange outlived its only bound queue")
	}
	if e := closeErr(t, err); e.Code != 404 || e.Reason != "NOT_FOUND - no exchange 'ax' in vhost '/'" {
		t.Errorf("exchange.declare passive: %v", e)
	}
}

package server

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/core"
)

// inTime runs fn and fails the test if it does not return within a
// deadline: an emulator left locked never answers.
func inTime(tb testing.TB, what string, fn func() error) {
	tb.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			tb.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		tb.Fatalf("%s did not answer within 10s: the emulator hangs", what)
	}
}

func TestPanickingDeadLetterHookDuringARabbitMQExpiryLeavesEveryProtocolServing(t *testing.T) {
	// issue 16.1: the RabbitMQ dead-letter hook panics while an expiry
	// (RB-1, x-message-ttl) dead-letters a message: the panic is logged
	// once with its stack, the message is kept, and a second client of
	// RabbitMQ and of Service Bus's engine keeps working.
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(filepath.Join(t.TempDir(), "data"), "--clock", "frozen"), noEnv); err != nil {
		t.Fatal(err)
	}
	var logBuf clienttest.Buffer
	m.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(&logBuf, t.Output()), nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	h := m.Rabbit.Hooks()
	h.DeadLetter = func(*core.Tx, *core.Entity, core.Item, core.DeadLetterReason) { panic("injected dead-letter bug") }
	m.Engine.Register(core.RabbitMQ, h)

	url := "amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/"
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("src", true, false, false, false, amqp.Table{
		"x-message-ttl": int32(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Publish("", "src", false, false, amqp.Publishing{Body: []byte("expiring"), DeliveryMode: 2}); err != nil {
		t.Fatal(err)
	}
	// The publish is in once a declare on the same channel answers.
	if _, err := ch.QueueDeclarePassive("src", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}

	a := MustAPI(t, m)
	inTime(t, "POST /api/clock/advance", func() error {
		if status := a.post("/api/clock/advance", `{"by":"2m"}`, nil); status != 200 {
			t.Errorf("advance: %d", status)
		}
		return nil
	})

	inTime(t, "a second RabbitMQ client", func() error {
		conn2, err := amqp.Dial(url)
		if err != nil {
			return err
		}
		defer conn2.Close()
		ch2, err := conn2.Channel()
		if err != nil {
			return err
		}
		if _, err := ch2.QueueDeclare("other", false, false, false, false, nil); err != nil {
			return err
		}
		if err := ch2.Confirm(false); err != nil {
			return err
		}
		dc, err := ch2.PublishWithDeferredConfirm("", "other", false, false, amqp.Publishing{Body: []byte("hello")})
		if err != nil {
			return err
		}
		if !dc.Wait() {
			t.Error("the second client's publish was nacked")
		}
		d, ok, err := ch2.Get("other", true)
		if err != nil {
			return err
		}
		if !ok || string(d.Body) != "hello" {
			t.Errorf("get = %q, %v; want hello", d.Body, ok)
		}
		return nil
	})
	inTime(t, "a Service Bus entity of the same engine", func() error {
		k := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
		MustCreate(t, m, core.Entity{EntityKey: k, Kind: "queue", Durable: true})
		MustEnqueue(t, m, k, core.Item{Body: []byte("sb"), Persistent: true})
		return nil
	})

	var src core.EntityKey
	for _, in := range m.Engine.Entities(m.Clock.Now(), core.RabbitMQ) {
		if strings.HasSuffix(in.Name, "/src") {
			src = in.EntityKey
		}
	}
	items, err := m.Engine.Peek(m.Clock.Now(), src, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || string(items[0].Body) != "expiring" || items[0].State != core.Deferred {
		t.Fatalf("items of src = %+v; want the expired message kept, deferred", items)
	}
	log := logBuf.String()
	if n := strings.Count(log, "panic in the DeadLetter hook"); n != 1 || !strings.Contains(log, "injected dead-letter bug") ||
		!strings.Contains(log, "goroutine ") {
		t.Fatalf("the log has %d reports of the hook's panic, want 1 with its value and stack:\n%s", n, log)
	}
}

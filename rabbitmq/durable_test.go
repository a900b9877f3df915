package rabbitmq_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core/storetest"
)

// answeredWhileHeld runs do, a change the client is answered for, while
// the store holds its commits, and reports whether the answer came before
// they were released; the answer must come once they are.
func answeredWhileHeld(t *testing.T, st *storetest.Held, do func() error) bool {
	t.Helper()
	st.Hold(true)
	done := make(chan error, 1)
	go func() { done <- do() }()
	early := false
	select {
	case err := <-done:
		early = true
		if err != nil {
			t.Error(err)
		}
	case <-time.After(300 * time.Millisecond):
	}
	st.Hold(false)
	if !early {
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer once the commits were done")
		}
	}
	return early
}

// Issue 25.5 (EM-3): a change of the topology, over AMQP or the
// management API, is answered only once it is durable, as RabbitMQ answers
// once its change is stored: a crash after the answer must not lose a
// durable queue, exchange, binding or policy the client was told of.
func TestTopologyChangesAreAnsweredOnceDurable_EM3(t *testing.T) {
	st := storetest.NewHeld()
	f := MustServerOnStore(t, st, t0)
	ch := f.MustChannel()
	a := MustManagement(t, f)
	steps := []struct {
		name string
		do   func() error
	}{
		{"queue.declare", func() error {
			_, err := ch.QueueDeclare("q", true, false, false, false, nil)
			return err
		}},
		{"exchange.declare", func() error { return ch.ExchangeDeclare("x", "direct", true, false, false, false, nil) }},
		{"queue.bind", func() error { return ch.QueueBind("q", "k", "x", false, nil) }},
		{"queue.unbind", func() error { return ch.QueueUnbind("q", "k", "x", nil) }},
		{"exchange.delete", func() error { return ch.ExchangeDelete("x", false, false) }},
		{"queue.delete", func() error {
			_, err := ch.QueueDelete("q", false, false, false)
			return err
		}},
		{"PUT queue", func() error {
			return status(a, http.MethodPut, "/api/queues/%2F/mq", map[string]any{"durable": true}, http.StatusCreated)
		}},
		{"PUT policy", func() error {
			return status(a, http.MethodPut, "/api/policies/%2F/p",
				map[string]any{"pattern": "^mq$", "definition": map[string]any{"message-ttl": 1000}}, http.StatusCreated)
		}},
		{"DELETE queue", func() error { return status(a, http.MethodDelete, "/api/queues/%2F/mq", nil, http.StatusNoContent) }},
	}
	for _, s := range steps {
		if answeredWhileHeld(t, st, s.do) {
			t.Errorf("%s was answered before its change was durable", s.name)
		}
	}
}

// status makes a management call a step: an error unless it answers want.
func status(a *api, method, path string, body any, want int) error {
	if r := a.do(method, path, body); r.status != want {
		return fmt.Errorf("%s %s: %d %s, want %d", method, path, r.status, r.body, want)
	}
	return nil
}

package rabbitmq_test

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/testdeadline"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Issue 25.0: the engine call of a topology change, made under topoMu,
// may apply another queue's idle deletion that fell due meanwhile; the
// Deleted hook that unlinks that queue takes topoMu too, and must not run
// on the goroutine that holds it. Each case moves the clock past the
// deadline of queue "idle" without applying anything (no Advance), so
// that the next topology change applies it.

// rule: RB-8
func TestTopologyChangeThatAppliesAnIdleDeletionDoesNotWaitForItself_RB8(t *testing.T) {
	for name, change := range map[string]func(*amqp.Channel) error{
		"declare another queue": func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare("other", false, false, false, false, nil)
			return err
		},
		"declare the same queue anew": func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare("idle", false, false, false, false, amqp.Table{"x-expires": int32(1000)})
			return err
		},
		"delete another queue": func(ch *amqp.Channel) error {
			_, err := ch.QueueDelete("keep", false, false, false)
			return err
		},
		"bind another queue": func(ch *amqp.Channel) error {
			return ch.QueueBind("keep", "k", "amq.direct", false, nil)
		},
		"declare an exchange": func(ch *amqp.Channel) error {
			return ch.ExchangeDeclare("x", "fanout", false, false, false, false, nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := MustServer(t)
			ch := f.MustChannel()
			MustDeclare(t, ch, "idle", amqp.Table{"x-expires": int32(1000)})
			MustDeclare(t, ch, "keep", nil)
			if _, err := f.clock.Advance(2 * time.Second); err != nil {
				t.Fatal(err)
			}
			testdeadline.Within(t, 10*time.Second, name, func() {
				if err := change(ch); err != nil {
					t.Error(err)
				}
			})
			// The topology still answers, and knows "idle" is gone unless
			// it was declared anew.
			testdeadline.Within(t, 10*time.Second, "a later declare", func() {
				MustDeclare(t, f.MustChannel(), "later", nil)
			})
			f.advance(0)
			_, err := f.MustChannel().QueueDeclarePassive("idle", false, false, false, false, nil)
			if redeclared := name == "declare the same queue anew"; redeclared != (err == nil) {
				t.Errorf("passive declare of idle after the change: %v", err)
			}
		})
	}
}

package rabbitmq_test

import (
	"fmt"
	"testing"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// A queue deleted by another connection while a channel's basic.consume of
// it is under way: the client, which asked for the broker's cancels
// (consumer_cancel_notify), gets the consume-ok before the basic.cancel of
// that consumer, or a 404 when the queue went first, never the cancel of a
// tag it has not been told of (channel.hold). The race is run 400 times;
// when consume holds no cancels, the order breaks within a few.
func TestServerCancelFollowsConsumeOk(t *testing.T) {
	f := MustServer(t)
	c := MustRawStart(t, f)
	c.send(0, &wire.ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00guest\x00guest", Locale: "en_US",
		ClientProperties: map[string]any{"capabilities": map[string]any{"consumer_cancel_notify": true}}})
	c.expect(&wire.ConnectionTune{})
	c.send(0, &wire.ConnectionTuneOk{ChannelMax: 10, FrameMax: 4096})
	c.send(0, &wire.ConnectionOpen{VirtualHost: "/"})
	c.expect(&wire.ConnectionOpenOk{})
	c.send(1, &wire.ChannelOpen{})
	c.expect(&wire.ChannelOpenOk{})
	declarer, deleter := f.MustChannel(), f.MustChannel()
	cancelled, gone := 0, 0
	for i := range 400 {
		q := fmt.Sprintf("q%d", i)
		MustDeclare(t, declarer, q, nil)
		c.send(1, &wire.BasicConsume{Queue: q, ConsumerTag: "c-" + q})
		deleted := make(chan error, 1)
		go func() {
			_, err := deleter.QueueDelete(q, false, false, false)
			deleted <- err
		}()
		switch m := c.next().(type) {
		case *wire.BasicConsumeOk:
			if cl := c.expect(&wire.BasicCancel{}).(*wire.BasicCancel); cl.ConsumerTag != "c-"+q {
				t.Fatalf("%s: cancel of %q, want c-%s", q, cl.ConsumerTag, q)
			}
			cancelled++
		case *wire.ChannelClose:
			if m.ReplyCode != 404 {
				t.Fatalf("%s: channel closed with %d %s", q, m.ReplyCode, m.ReplyText)
			}
			c.send(1, &wire.ChannelCloseOk{})
			c.send(1, &wire.ChannelOpen{})
			c.expect(&wire.ChannelOpenOk{})
			gone++
		default:
			t.Fatalf("%s: first frame %T %+v, want consume-ok or a 404", q, m, m)
		}
		if err := <-deleted; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d consumers cancelled after their consume-ok, %d queues gone before the consume", cancelled, gone)
}

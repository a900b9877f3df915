package rabbitmq

import (
	"context"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// confirmer sends a confirm mode channel's basic.ack and basic.nack: in
// publish order, each once the message's writes are durable (EM-3), many
// at a time with multiple when several are ready together.
//
// When nothing is waiting to be confirmed and the client has sent nothing
// more, a publisher most likely waits for this very confirm: the
// connection's goroutine then confirms it itself (now), rather than
// handing it to the confirmer's goroutine and that goroutine waking.
type confirmer struct {
	ch   *channel
	in   chan confirmReq
	stop func()

	mu lockorder.Mutex
	// pending counts the confirms queued and not yet sent; lastSent is the
	// highest seq confirmed. Whoever sends (run, or now while pending is
	// 0) owns lastSent until pending is back to 0.
	pending  int
	lastSent uint64
}

type confirmReq struct {
	seq    uint64
	commit *core.Commit // nil when nothing was written
	nack   bool
}

func newConfirmer(ch *channel) *confirmer {
	cf := &confirmer{ch: ch, in: make(chan confirmReq, 4096)}
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	// stop returns once the confirmer has sent its last frame: the
	// channel's close-ok, written after, is the last frame of the channel
	// (amqp091-go closes the whole connection on a method for a channel
	// it has let go).
	cf.stop = func() {
		cancel()
		<-exited
	}
	ch.c.s.wg.Add(1)
	go cf.run(ctx, exited)
	return cf
}

// add queues the confirm of publish seq.
func (cf *confirmer) add(seq uint64, commit *core.Commit, nack bool) {
	cf.mu.Lock()
	cf.pending++
	cf.mu.Unlock()
	cf.in <- confirmReq{seq: seq, commit: commit, nack: nack}
}

// now confirms publish seq on the caller's goroutine once its writes are
// durable, and reports true, if no earlier confirm is still to be sent;
// else it does nothing and reports false (add queues it then). It blocks
// for the commit (which the caller then leads, core.NewLedCommit) and the
// write of the frame.
func (cf *confirmer) now(seq uint64, commit *core.Commit, nack bool) bool {
	cf.mu.Lock()
	if cf.pending > 0 {
		cf.mu.Unlock()
		return false
	}
	cf.pending++ // every earlier publish is confirmed: seq is the next
	cf.mu.Unlock()
	if commit != nil && commit.Wait(context.Background()) != nil {
		nack = true
	}
	var m wire.Method = &wire.BasicAck{DeliveryTag: seq}
	if nack {
		m = &wire.BasicNack{DeliveryTag: seq}
	}
	cf.send(m)
	cf.mu.Lock()
	cf.lastSent = seq
	cf.pending--
	cf.mu.Unlock()
	return true
}

// send writes a basic.ack or basic.nack of the channel, on the caller's
// goroutine when the connection's writer is idle (frameWriter.writeNow).
func (cf *confirmer) send(m wire.Method) {
	cf.ch.c.w.writeNow(func(b []byte) []byte { return wire.AppendMethodFrame(b, cf.ch.id, m) })
}

// run sends the queued confirms until ctx ends, and nothing after.
func (cf *confirmer) run(ctx context.Context, exited chan struct{}) {
	defer cf.ch.c.s.wg.Done()
	defer close(exited)
	var acked, lastSent uint64 // acked: highest seq ready to ack; lastSent: highest seq confirmed
	taken := 0                 // requests taken since pending was last lowered
	flush := func() {
		if acked > lastSent && ctx.Err() == nil {
			cf.send(&wire.BasicAck{DeliveryTag: acked, Multiple: acked > lastSent+1})
			lastSent = acked
		}
	}
	for {
		var r confirmReq
		select {
		case r = <-cf.in:
		case <-ctx.Done():
			return
		}
		if ctx.Err() != nil {
			return // both were ready
		}
		// pending > 0 from add until this batch is sent: now stays out and
		// lastSent is this goroutine's.
		cf.mu.Lock()
		acked, lastSent = cf.lastSent, cf.lastSent
		cf.mu.Unlock()
		for {
			taken++
			nack := r.nack
			if r.commit != nil && r.commit.Wait(ctx) != nil {
				if ctx.Err() != nil {
					return
				}
				nack = true
			}
			if nack {
				flush()
				if ctx.Err() != nil {
					return
				}
				cf.ch.send(&wire.BasicNack{DeliveryTag: r.seq})
				lastSent = r.seq
				acked = r.seq
			} else {
				acked = r.seq
			}
			select {
			case r = <-cf.in:
				continue
			default:
			}
			break
		}
		flush()
		cf.mu.Lock()
		cf.lastSent = lastSent
		cf.pending -= taken
		cf.mu.Unlock()
		taken = 0
	}
}

// txState is a transactional channel's publishes and settlements waiting
// for tx.commit.
type txState struct {
	publishes []*message
	settles   []txSettle
}

type txSettle struct {
	tag      uint64
	multiple bool
	kind     settleKind
}

func (t *txState) reset() { t.publishes, t.settles = nil, nil }

// commit is tx.commit: the publishes, then the settlements, and commit-ok
// once they are durable.
func (ch *channel) commit() error {
	t := ch.tx
	var last *core.Commit
	for _, m := range t.publishes {
		res, err := ch.c.s.publish(ch.c.vhost, m)
		if err != nil {
			t.reset()
			return err
		}
		if res.routed == 0 && m.mandatory {
			ch.basicReturn(m, wire.NoRoute, "NO_ROUTE")
		}
		if res.commit != nil {
			last = res.commit
		}
	}
	for _, st := range t.settles {
		ds, err := ch.collect(st.tag, st.multiple, true)
		if err == nil {
			ch.apply(ds, st.kind)
		}
	}
	t.reset()
	if last != nil {
		last.Wait(context.Background())
	}
	return nil
}

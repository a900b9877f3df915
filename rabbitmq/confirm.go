package rabbitmq

import (
	"context"
	"sync"

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
//
// The confirms handed over wait in a queue that grows with them, and the
// goroutine that sends them runs only while some wait: a channel in
// confirm mode that publishes nothing holds neither (issue 25.8).
type confirmer struct {
	ch     *channel
	ctx    context.Context // ends with stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // the run goroutine

	mu lockorder.Mutex
	// pending counts the confirms queued and not yet sent; lastSent is the
	// highest seq confirmed. Whoever sends (run, or now while pending is
	// 0) owns lastSent until pending is back to 0.
	pending  int
	lastSent uint64
	// queue holds the confirms add handed over that run has not taken;
	// running is set while run goes; room is signalled when run takes
	// from queue, and by stop.
	queue   []confirmReq
	running bool
	stopped bool
	room    sync.Cond
}

// maxQueuedConfirms bounds the confirms waiting for the confirmer: past it
// the connection's reader waits, which holds back a publisher that goes
// faster than lapse commits.
const maxQueuedConfirms = 4096

type confirmReq struct {
	seq    uint64
	commit *core.Commit // nil when nothing was written
	nack   bool
}

func newConfirmer(ch *channel) *confirmer {
	cf := &confirmer{ch: ch}
	cf.ctx, cf.cancel = context.WithCancel(context.Background())
	cf.room.L = &cf.mu
	return cf
}

// stop returns once the confirmer has sent its last frame: the channel's
// close-ok, written after, is the last frame of the channel (amqp091-go
// closes the whole connection on a method for a channel it has let go).
// Confirms added after it are dropped.
func (cf *confirmer) stop() {
	cf.mu.Lock()
	cf.stopped = true
	cf.cancel()
	cf.room.Broadcast()
	cf.mu.Unlock()
	cf.wg.Wait() // no Add after stopped is set
}

// add queues the confirm of publish seq, starting the goroutine that sends
// it unless it runs. The connection's reader calls it.
func (cf *confirmer) add(seq uint64, commit *core.Commit, nack bool) {
	cf.mu.Lock()
	for len(cf.queue) >= maxQueuedConfirms && !cf.stopped {
		cf.room.Wait()
	}
	if cf.stopped {
		cf.mu.Unlock()
		return
	}
	cf.pending++
	cf.queue = append(cf.queue, confirmReq{seq: seq, commit: commit, nack: nack})
	if !cf.running {
		cf.running = true
		cf.wg.Add(1)
		// The connection, which the server waits for, counts already.
		cf.ch.c.s.wg.Add(1)
		go cf.run()
	}
	cf.mu.Unlock()
}

// take returns what is queued, giving the queue spare's room in exchange.
// When nothing is and last, run is ending: it lets go of the queue.
func (cf *confirmer) take(spare []confirmReq, last bool) []confirmReq {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if len(cf.queue) == 0 {
		if last {
			cf.queue, cf.running = nil, false
		}
		return nil
	}
	q := cf.queue
	cf.queue = spare[:0]
	cf.room.Broadcast()
	return q
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

// run sends the queued confirms until none is left or stop; it returns
// then, and sends nothing after stop.
func (cf *confirmer) run() {
	defer cf.ch.c.s.wg.Done()
	defer cf.wg.Done()
	ctx := cf.ctx
	var acked, lastSent uint64 // acked: highest seq ready to ack; lastSent: highest seq confirmed
	flush := func() {
		if acked > lastSent && ctx.Err() == nil {
			cf.send(&wire.BasicAck{DeliveryTag: acked, Multiple: acked > lastSent+1})
			lastSent = acked
		}
	}
	var spare []confirmReq
	for {
		batch := cf.take(spare, true)
		if batch == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		// pending > 0 from add until this batch is sent: now stays out and
		// lastSent is this goroutine's.
		cf.mu.Lock()
		acked, lastSent = cf.lastSent, cf.lastSent
		cf.mu.Unlock()
		taken := 0 // requests taken since pending was last lowered
		for batch != nil {
			for _, r := range batch {
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
			}
			clear(batch)
			spare = batch
			// what was queued meanwhile goes in the same basic.ack
			batch = cf.take(spare, false)
			if batch != nil {
				spare = nil
			}
		}
		flush()
		cf.mu.Lock()
		cf.lastSent = lastSent
		cf.pending -= taken
		cf.mu.Unlock()
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

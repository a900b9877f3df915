package servicebus

import (
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// maxPendingAcks bounds the outcomes waiting for their commits: past it
// the connection's reader waits, which holds back a client that sends
// faster than lapse commits.
const maxPendingAcks = 4096

// ackBatch is the most outcomes the acker waits for and answers at a time.
const ackBatch = 256

// pendingAck is the outcome of a delivery the client sent, to be told once
// what it stored is committed.
type pendingAck struct {
	l       *link // the client's sending link
	id      uint32
	commits []*core.Commit
	err     error
}

// reply queues the outcome of delivery id; a delivery the client settled
// itself gets none. Only the connection's reader calls it. The queue grows
// with what is pending and an acker runs only while something is: an idle
// connection holds neither (issue 25.8). An outcome that waits for no
// commit and for no earlier outcome, while the client has sent nothing
// more (whose outcomes could share its disposition), is sent at once, on
// the reader: a sender waiting for each outcome, on a store that has
// committed already, makes no goroutine per message.
func (c *conn) reply(l *link, id uint32, settled bool, commits []*core.Commit, err error) {
	if err != nil {
		c.log.Debug("a delivery was refused", "delivery", id, "err", err)
	}
	if settled {
		return
	}
	a := pendingAck{l: l, id: id, commits: commits, err: err}
	c.ackMu.Lock()
	if !c.acking && len(c.acks) == 0 && !c.ackStopped && c.br.buffered() == 0 && committed(commits) {
		c.ackMu.Unlock()
		c.answer([]pendingAck{a})
		return
	}
	for len(c.acks) >= maxPendingAcks && !c.ackStopped {
		c.ackRoom.Wait()
	}
	if c.ackStopped {
		c.ackMu.Unlock()
		return
	}
	c.acks = append(c.acks, a)
	start := !c.acking
	c.acking = true
	c.ackMu.Unlock()
	if start {
		// The reader is the one that waits for c.wg in shutdown: this Add
		// comes before that Wait.
		c.wg.Add(1)
		go c.acker()
	}
}

// committed reports whether every commit is done.
func committed(commits []*core.Commit) bool {
	for _, cm := range commits {
		select {
		case <-cm.DoneChan():
		default:
			return false
		}
	}
	return true
}

// stopAcks ends the wait of reply for room and drops what is queued from
// then on; shutdown calls it.
func (c *conn) stopAcks() {
	c.ackMu.Lock()
	c.ackStopped = true
	c.ackRoom.Broadcast()
	c.ackMu.Unlock()
}

// acker waits for the commits of each queued delivery in turn and sends
// its disposition; consecutive accepted deliveries of a session share one.
// It returns once the queue is empty, letting go of it.
func (c *conn) acker() {
	defer c.wg.Done()
	var spare []pendingAck
	for {
		c.ackMu.Lock()
		if len(c.acks) == 0 || c.ackStopped {
			c.acks, c.acking = nil, false
			c.ackMu.Unlock()
			return
		}
		n := min(len(c.acks), ackBatch)
		batch := c.acks[:n:n]
		if n == len(c.acks) {
			c.acks = spare // the batch before this one's, answered
		} else {
			c.acks = c.acks[n:]
		}
		c.ackRoom.Broadcast()
		c.ackMu.Unlock()
		if !c.answer(batch) {
			c.ackMu.Lock()
			c.acks, c.acking = nil, false
			c.ackMu.Unlock()
			return
		}
		clear(batch)
		spare = batch[:0]
	}
}

// answer waits for the commits of each delivery of batch in turn and sends
// its disposition; consecutive accepted deliveries of a session share one.
// It reports false, having sent nothing more, once the connection ends.
func (c *conn) answer(batch []pendingAck) bool {
	for i := range batch {
		a := &batch[i]
		if a.err != nil {
			continue
		}
		for _, cm := range a.commits {
			if err := cm.Wait(c.ctx); err != nil {
				if c.ctx.Err() != nil {
					return false
				}
				a.err = core.Errorf(core.EINTERNAL, "commit: %v", err)
				break
			}
		}
	}
	for i := 0; i < len(batch); {
		a := batch[i]
		// Written through the session, and only while the link is
		// attached: the client may have detached it, or ended the
		// session, while its deliveries were being committed.
		if a.err != nil {
			a.l.ss.writeFor(a.l, &amqp.Disposition{Role: amqp.RoleReceiver, First: a.id,
				Settled: true, State: &amqp.Rejected{Error: amqpError(a.err)}})
			i++
			continue
		}
		j := i + 1
		for j < len(batch) && batch[j].err == nil && batch[j].l == a.l && batch[j].id == batch[j-1].id+1 {
			j++
		}
		d := &amqp.Disposition{Role: amqp.RoleReceiver, First: a.id, Settled: true, State: &amqp.Accepted{}}
		if j-i > 1 {
			last := batch[j-1].id
			d.Last = &last
		}
		a.l.ss.writeFor(a.l, d)
		i = j
	}
	return true
}

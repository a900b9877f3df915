package servicebus

import (
	"context"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// pendingAck is the outcome of a delivery the client sent, to be told once
// what it stored is committed.
type pendingAck struct {
	l       *link // the client's sending link
	id      uint32
	commits []*core.Commit
	err     error
}

// reply queues the outcome of delivery id; a delivery the client settled
// itself gets none.
func (c *conn) reply(l *link, id uint32, settled bool, commits []*core.Commit, err error) {
	if err != nil {
		c.log.Debug("a delivery was refused", "delivery", id, "err", err)
	}
	if settled {
		return
	}
	c.ackOnce.Do(func() {
		c.acks = make(chan pendingAck, 4096)
		c.wg.Add(1)
		go c.acker()
	})
	select {
	case c.acks <- pendingAck{l: l, id: id, commits: commits, err: err}:
	case <-c.done:
	}
}

// acker waits for the commits of each queued delivery in turn and sends
// its disposition; consecutive accepted deliveries of a session share one.
func (c *conn) acker() {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.done
		cancel()
	}()
	batch := make([]pendingAck, 0, 256)
	for {
		batch = batch[:0]
		select {
		case <-c.done:
			return
		case a := <-c.acks:
			batch = append(batch, a)
		}
	more:
		for len(batch) < cap(batch) {
			select {
			case a := <-c.acks:
				batch = append(batch, a)
			default:
				break more
			}
		}
		for i := range batch {
			a := &batch[i]
			if a.err != nil {
				continue
			}
			for _, cm := range a.commits {
				if err := cm.Wait(ctx); err != nil {
					if ctx.Err() != nil {
						return
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
	}
}

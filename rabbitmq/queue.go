package rabbitmq

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// queue is a queue: its declaration, the bindings that lead to it, and its
// consumers. Its messages are the items of its core entity.
type queue struct {
	s     *Server
	vhost string
	name  string
	key   core.EntityKey
	// h is the core entity's handle: the queue is served only while it
	// is live, and a hook about an earlier queue of the same name leaves
	// this one alone (core/handle.go).
	h          *core.Handle
	durable    bool
	exclusive  bool
	autoDelete bool
	args       map[string]any
	// singleActive is x-single-active-consumer: the oldest consumer gets
	// every message, the next one once it goes.
	singleActive bool
	owner        *conn      // the connection of an exclusive queue
	inbound      []*binding // under Server.mu
	settings     atomic.Pointer[adapters.RabbitQueueSettings]
	dl           deadLetterCache // under the engine's lock

	// dmu keeps deliveries in queue order: it is held from taking a
	// message out of the engine until it is written to its consumer, by the
	// dispatcher and by a publish that hands its message straight over.
	dmu lockorder.Mutex
	// nconsumers is len(consumers), read without mu.
	nconsumers atomic.Int32

	mu          lockorder.Mutex
	consumers   []*consumer
	next        int // round-robin position
	hadConsumer bool
	deleted     bool
	running     bool // a dispatcher goroutine runs
	wake        chan struct{}
}

func (s *Server) newQueue(vhost, name string, durable, exclusive, autoDelete bool, args map[string]any) *queue {
	sac, _ := args["x-single-active-consumer"].(bool)
	return &queue{s: s, vhost: vhost, name: name, key: s.queueKey(vhost, name), durable: durable,
		exclusive: exclusive, autoDelete: autoDelete, args: args, singleActive: sac, wake: make(chan struct{}, 1)}
}

func (q *queue) setSettings(st adapters.RabbitQueueSettings) { q.settings.Store(&st) }

// giveBack returns delivered message seq to q (a requeue, a channel closed
// with it unacknowledged): count is its delivery count, this delivery
// included, so it is also the number of times it has come back. A quorum
// queue whose delivery limit that passes dead-letters it with reason
// delivery_limit, or drops it without a dead-letter exchange (RB-12), as
// RabbitMQ 3.10 does (difftest's RB12QuorumDeliveryLimitDeadLetters).
func (q *queue) giveBack(now time.Time, seq uint64, count uint32) {
	if lim := q.getSettings().DeliveryLimit; lim != nil && int64(count) > *lim {
		q.s.e.DeadLetter(now, q.key, seq, core.DeadLetterReason{Code: "delivery_limit",
			Description: fmt.Sprintf("returned %d times, over the queue's delivery limit of %d", count, *lim), Rule: "RB-12"})
		return
	}
	q.s.e.Release(now, q.key, seq)
}

func (q *queue) getSettings() adapters.RabbitQueueSettings {
	if st := q.settings.Load(); st != nil {
		return *st
	}
	return adapters.RabbitQueueSettings{Type: "classic", Overflow: "drop-head"}
}

// consumer is a basic.consume on a queue.
type consumer struct {
	ch        *channel
	q         *queue
	tag       string
	noAck     bool
	exclusive bool
	prefetch  int64          // the channel's per-consumer prefetch count when it was made; 0 for none
	args      map[string]any // basic.consume's arguments, for the management API
	unacked   atomic.Int64
	cancelled atomic.Bool
	waiting   atomic.Bool // made, but its consume-ok is not sent yet
}

// reserve takes room for one delivery under the consumer's and its
// channel's prefetch limits.
func (c *consumer) reserve() bool {
	if c.cancelled.Load() || c.waiting.Load() || !c.ch.active.Load() {
		return false
	}
	if c.noAck {
		return true
	}
	if n := c.unacked.Add(1); c.prefetch > 0 && n > c.prefetch {
		c.unacked.Add(-1)
		return false
	}
	if !c.ch.reserve() {
		c.unacked.Add(-1)
		return false
	}
	return true
}

// unreserve gives back room reserve took.
func (c *consumer) unreserve() {
	if c.noAck {
		return
	}
	c.unacked.Add(-1)
	c.ch.unreserve()
}

// signal wakes the queue's dispatcher, if it has one.
func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// retireIfUnused marks the queue deleted, which closes it to consumers,
// if it has none, and reports whether it did: an auto-delete queue whose
// last consumer went is deleted only if no other joined meanwhile.
func (q *queue) retireIfUnused() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.consumers) > 0 || q.deleted {
		return false
	}
	q.deleted = true
	return true
}

// Why addConsumer took a consumer or not.
const (
	consumerAdded = iota
	queueGone
	queueInExclusiveUse
)

// addConsumer adds c and makes sure a dispatcher runs. It adds nothing to
// a deleted queue (queueGone), nor an exclusive consumer to a queue with
// consumers or any to one with an exclusive consumer (queueInExclusiveUse):
// checked with the adding, so that two consumers made at once cannot both
// pass.
func (q *queue) addConsumer(c *consumer) int {
	q.mu.Lock()
	if q.deleted {
		q.mu.Unlock()
		return queueGone
	}
	if c.exclusive && len(q.consumers) > 0 || slices.ContainsFunc(q.consumers, func(o *consumer) bool { return o.exclusive }) {
		q.mu.Unlock()
		return queueInExclusiveUse
	}
	q.consumers = append(q.consumers, c)
	q.nconsumers.Store(int32(len(q.consumers)))
	q.hadConsumer = true
	start := !q.running && !q.deleted
	if start {
		q.running = true
		q.s.wg.Add(1)
	}
	q.mu.Unlock()
	if start {
		go q.run()
	}
	q.signal()
	return consumerAdded
}

// removeConsumer takes c out; it reports whether the queue is auto-delete
// and now has no consumer left.
func (q *queue) removeConsumer(c *consumer) (autoDeleteNow bool) {
	c.cancelled.Store(true)
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, o := range q.consumers {
		if o == c {
			q.consumers = append(q.consumers[:i:i], q.consumers[i+1:]...)
			q.nconsumers.Store(int32(len(q.consumers)))
			break
		}
	}
	return q.autoDelete && q.hadConsumer && len(q.consumers) == 0 && !q.deleted
}

func (q *queue) consumerCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.consumers)
}

// pick returns the next consumer, round robin, with room for a delivery
// reserved, and the round-robin position before it for unpick; nil when
// none has room. Callers hold dmu.
func (q *queue) pick() (*consumer, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.consumers)
	if q.singleActive && n > 0 {
		// Only the oldest consumer is active; the others wait their turn
		// (difftest's SingleActiveConsumerTakesAll).
		if c := q.consumers[0]; c.reserve() {
			return c, q.next
		}
		return nil, 0
	}
	for i := 0; i < n; i++ {
		c := q.consumers[(q.next+i)%n]
		if c.reserve() {
			prev := q.next
			q.next = (q.next + i + 1) % n
			return c, prev
		}
	}
	return nil, 0
}

// unpick undoes a pick that delivered nothing: the consumer's room is
// given back and the round robin stays where it was, so that it moves on
// only with a delivery, as RabbitMQ's does (a dispatcher woken by an ack
// while the queue is empty must not skip the next consumer's turn).
// Callers hold dmu.
func (q *queue) unpick(c *consumer, prev int) {
	c.unreserve()
	q.mu.Lock()
	q.next = prev
	q.mu.Unlock()
}

// run is the queue's dispatcher: it hands messages to consumers with room
// until there are no consumers left.
func (q *queue) run() {
	defer q.s.wg.Done()
	for {
		select {
		case <-q.wake:
		case <-q.s.closing:
			q.mu.Lock()
			q.running = false
			q.mu.Unlock()
			return
		}
		if !q.dispatch() {
			return
		}
	}
}

// dispatch delivers what it can; it returns false, with running cleared,
// once the queue has no consumers or is deleted.
func (q *queue) dispatch() bool {
	for {
		switch q.step() {
		case stepDelivered:
			continue
		case stepEmpty:
			return true
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if len(q.consumers) == 0 || q.deleted {
			q.running = false
			return false
		}
		return true
	}
}

// drain delivers what it can now, in the caller's goroutine.
func (q *queue) drain() {
	for q.step() == stepDelivered {
	}
}

// What one step of delivery did.
const (
	stepDelivered = iota // a message went to a consumer
	stepEmpty            // a consumer had room, the queue had no message
	stepNoRoom           // no consumer had room
)

// step delivers the queue's head to the next consumer with room. Room is
// reserved only under dmu, so a publish handing its message over (which
// holds dmu) never finds a consumer full for a moment.
func (q *queue) step() int {
	q.dmu.Lock()
	defer q.dmu.Unlock()
	c, prev := q.pick()
	if c == nil {
		return stepNoRoom
	}
	if !q.deliverOne(c) {
		q.unpick(c, prev)
		return stepEmpty
	}
	return stepDelivered
}

// deliverOne hands the queue's head to c; false when the queue is empty.
// Callers hold dmu.
func (q *queue) deliverOne(c *consumer) bool {
	now := q.s.now()
	var (
		it    core.Item
		found bool
		err   error
	)
	if c.noAck {
		it, found, _, err = q.s.e.Take(now, q.key)
	} else {
		it, found, err = q.s.e.Receive(now, q.key, time.Time{})
	}
	if err != nil || !found {
		return false
	}
	c.ch.deliver(c, q, it)
	return true
}

// stop marks the queue deleted and cancels its consumers, telling their
// clients (basic.cancel) when they asked for it.
func (q *queue) stop() {
	q.mu.Lock()
	q.deleted = true
	cs := q.consumers
	q.consumers = nil
	q.nconsumers.Store(0)
	q.mu.Unlock()
	q.signal()
	for _, c := range cs {
		c.cancelled.Store(true)
		c.ch.serverCancel(c)
	}
}

// zeroTime is a lock with no expiry: a RabbitMQ delivery is unacked until
// its channel settles it.
var zeroTime time.Time

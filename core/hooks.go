package core

import (
	"context"
	"time"

	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// The rule for a protocol's hooks that tell it what happened (issue 25.0):
// Available, SessionAvailable, SessionLost and Deleted never run on the
// goroutine of an engine call. An engine call queues them, in the order
// it made them, on its protocol's lane, and the lane's own goroutine runs
// them one at a time. So a front-end may hold any lock of its own across
// any engine call, and a hook may take any lock of its front-end and call
// the engine: no caller can be waiting, on the hook's goroutine, for a
// lock the hook takes. (Before, the engine ran them as it let go of its
// lock, on its caller's goroutine: a queue.declare under the RabbitMQ
// topology's lock whose engine call applied another queue's idle deletion
// ran the Deleted hook, which takes that lock, and waited for itself.)
//
// A lane's goroutine lives while the lane has work and ends when it is
// empty. WaitHooks waits until what was queued before it has run: the
// control API's clock calls and lapsetest wait for it, so that when they
// return, the front-ends know of every deletion and lost session that the
// move made.
//
// The hooks that run inside the engine's lock (a DeadLetterFunc,
// Recovered, Describe, Resubmit) must take no lock at all, ItemChanged
// none but a leaf lock of its own; Config.Wake and Config.ObserveLag must
// not block. ItemChanged ran on the lane once: that cost every Cosmos DB
// write a goroutine woken, for a hook that only records, and made a read
// of the change feed wait for the lane.

// hookCall is one queued call of a hook.
type hookCall struct {
	kind   hookKind
	k      EntityKey
	group  string
	holder string
	ent    Entity
}

type hookKind uint8

const (
	hookAvailable hookKind = iota
	hookSessionAvailable
	hookSessionLost
	hookDeleted
)

// hookLane runs the hooks of one protocol, in order, on a goroutine of
// its own.
type hookLane struct {
	h ProtocolHooks

	mu      lockorder.Mutex
	queue   []hookCall
	spare   []hookCall // the slice the goroutine last ran, for reuse
	running bool
	posted  uint64 // calls queued so far
	done    uint64 // calls run so far
	waiters []hookWaiter
}

// hookWaiter is a WaitHooks waiting for the lane's done to reach at.
type hookWaiter struct {
	at uint64
	ch chan struct{}
}

// post queues the hooks of one engine call on the lanes of their
// protocols and starts each lane's goroutine if it is not running.
func (e *Engine) post(lanes map[string]*hookLane, notify []EntityKey, sess []sessionNote, lost []sessionLoss, deleted []Entity) {
	// The common case: one entity to tell of, nothing else.
	if len(sess) == 0 && len(lost) == 0 && len(deleted) == 0 && len(notify) == 1 {
		if l := lanes[notify[0].Protocol]; l != nil && l.h.Available != nil {
			l.mu.Lock()
			l.add(hookCall{kind: hookAvailable, k: notify[0]})
			e.start(l)
		}
		return
	}
	touched := make(map[*hookLane]bool, 1)
	add := func(protocol string, c hookCall, has bool) {
		l := lanes[protocol]
		if l == nil || !has {
			return
		}
		if !touched[l] {
			touched[l] = true
			l.mu.Lock()
		}
		l.add(c)
	}
	for _, k := range notify {
		l := lanes[k.Protocol]
		add(k.Protocol, hookCall{kind: hookAvailable, k: k}, l != nil && l.h.Available != nil)
	}
	for _, n := range sess {
		l := lanes[n.k.Protocol]
		add(n.k.Protocol, hookCall{kind: hookSessionAvailable, k: n.k, group: n.group}, l != nil && l.h.SessionAvailable != nil)
	}
	for _, s := range lost {
		l := lanes[s.k.Protocol]
		add(s.k.Protocol, hookCall{kind: hookSessionLost, k: s.k, group: s.group, holder: s.holder}, l != nil && l.h.SessionLost != nil)
	}
	for _, ent := range deleted {
		l := lanes[ent.Protocol]
		add(ent.Protocol, hookCall{kind: hookDeleted, k: ent.EntityKey, ent: ent}, l != nil && l.h.Deleted != nil)
	}
	for l := range touched {
		e.start(l)
	}
}

// add queues c, with l.mu held. A call that repeats the one queued last
// without being run yet (Available or SessionAvailable of the same
// entity and session) is dropped: the one queued runs after both changes.
func (l *hookLane) add(c hookCall) {
	if n := len(l.queue); n > 0 && (c.kind == hookAvailable || c.kind == hookSessionAvailable) {
		last := &l.queue[n-1]
		if last.kind == c.kind && last.k == c.k && last.group == c.group {
			return
		}
	}
	l.queue = append(l.queue, c)
	l.posted++
}

// start, with l.mu held, starts l's goroutine unless it runs, and lets go
// of l.mu.
func (e *Engine) start(l *hookLane) {
	if l.running || len(l.queue) == 0 {
		l.mu.Unlock()
		return
	}
	l.running = true
	l.mu.Unlock()
	go e.runLane(l)
}

// runLane runs l's queued hooks until none is left.
func (e *Engine) runLane(l *hookLane) {
	l.mu.Lock()
	for len(l.queue) > 0 {
		batch := l.queue
		l.queue, l.spare = l.spare[:0], nil
		l.mu.Unlock()
		for i := range batch {
			e.callHook(l, &batch[i])
			batch[i] = hookCall{}
		}
		l.mu.Lock()
		l.done += uint64(len(batch))
		l.spare = batch[:0]
		l.wake()
	}
	l.running = false
	l.mu.Unlock()
}

// wake, with l.mu held, releases the waiters whose calls have all run.
func (l *hookLane) wake() {
	if len(l.waiters) == 0 {
		return
	}
	kept := l.waiters[:0]
	for _, w := range l.waiters {
		if l.done >= w.at {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	clear(l.waiters[len(kept):])
	l.waiters = kept
}

// callHook runs one queued call, its panic contained (guard.go).
func (e *Engine) callHook(l *hookLane, c *hookCall) {
	switch c.kind {
	case hookAvailable:
		e.callAvailable(l.h.Available, c.k)
	case hookSessionAvailable:
		e.callSessionAvailable(l.h.SessionAvailable, sessionNote{k: c.k, group: c.group})
	case hookSessionLost:
		e.callSessionLost(l.h.SessionLost, sessionLoss{k: c.k, group: c.group, holder: c.holder})
	case hookDeleted:
		e.callDeleted(l.h.Deleted, c.ent)
	}
}

// WaitHooks returns once every hook that the engine queued before the
// call has run, or with ctx's error. Call it holding no lock that a hook
// may take, and never from a hook: it would wait for itself.
func (e *Engine) WaitHooks(ctx context.Context) error {
	lanes := locked(e, func() map[string]*hookLane { return e.lanes })
	var chans []chan struct{}
	for _, l := range lanes {
		l.mu.Lock()
		if l.done < l.posted {
			ch := make(chan struct{})
			l.waiters = append(l.waiters, hookWaiter{at: l.posted, ch: ch})
			chans = append(chans, ch)
		}
		l.mu.Unlock()
	}
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// ApplyDue applies everything due up to now, as Advance does, and returns
// once what it changed is durable and the front-ends' hooks about it have
// run: a queue deleted for being idle is gone from its front-end's tables,
// a lost session's holder is told. It is what a clock move that answers
// "done" waits for (the control API, lapsetest, tests); it returns how
// many events the call recorded. The same caveat as WaitHooks holds.
func (e *Engine) ApplyDue(ctx context.Context, now time.Time) (int, error) {
	n, c := e.Advance(now)
	if err := c.Wait(ctx); err != nil {
		return n, err
	}
	return n, e.WaitHooks(ctx)
}

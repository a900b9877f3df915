package core

import "time"

// This file holds the calls a broker's queue needs beyond receiving and
// settling one item: its figures without a walk over its items, purge, and
// dropping its head when it is over a length limit.

// Counts returns entity k's counts (without NextDue or the dead-letter
// queue's figures) and its consumer count, in constant time: what a
// queue.declare-ok or basic.get-ok reports.
func (e *Engine) Counts(now time.Time, k EntityKey) (Counts, int, error) {
	ent, err := e.begin(now, k)
	if err != nil {
		return Counts{}, 0, err
	}
	c := Counts{
		Active:       ent.counts[Active],
		Scheduled:    ent.counts[Scheduled],
		Locked:       ent.counts[Locked],
		Deferred:     ent.counts[Deferred],
		DeadLettered: ent.deadLettered,
		ActiveBytes:  ent.bytes[Active],
	}
	n := ent.consumers
	e.unlock()
	return c, n, nil
}

// Purge removes every active item of entity k, leaving locked, scheduled
// and deferred ones, and returns how many it removed (RabbitMQ's
// queue.purge). Purged items are neither expired nor dead-lettered.
func (e *Engine) Purge(now time.Time, k EntityKey) (int, *Commit, error) {
	ent, err := e.begin(now, k)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for x := e.takeReady(ent); x != nil; x = e.takeReady(ent) {
		e.removeItem(x)
		n++
	}
	return n, e.unlock(), nil
}

// DropHead removes the head of entity k's active items while there are more
// than maxCount of them or their bodies hold more than maxBytes (a negative
// limit is no limit), handing each to the protocol's DeadLetterFunc with why
// (RabbitMQ's x-max-length with overflow drop-head, reason maxlen). It
// returns how many it removed.
func (e *Engine) DropHead(now time.Time, k EntityKey, maxCount int, maxBytes int64, why DeadLetterReason) (int, *Commit, error) {
	ent, err := e.begin(now, k)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for (maxCount >= 0 && ent.counts[Active] > maxCount) || (maxBytes >= 0 && ent.bytes[Active] > maxBytes) {
		x := e.takeReady(ent)
		if x == nil {
			break
		}
		e.removeItem(x)
		e.events.record(Event{Time: e.now, Due: x.DueAt, Protocol: ent.Protocol, Entity: ent.Name,
			Item: x.Seq, ItemKey: x.Key, Rule: why.Rule, Action: ActionDeadLettered},
			explanation{kind: explainDeadLetter, text: why.Code + ": " + why.Description})
		if fn := e.protos[ent.Protocol].DeadLetter; fn != nil {
			e.handOver(fn, ent, x, why)
		} else {
			ent.deadLettered++
		}
		n++
	}
	return n, e.unlock(), nil
}

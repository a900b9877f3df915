package core

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// This file holds an entity's length limits: caps on its active items
// (Policy.MaxItems, Policy.MaxBytes) kept by every enqueue under the
// engine's lock, so that two enqueues at once cannot both pass a cap
// (RabbitMQ's x-max-length, x-max-length-bytes and x-overflow, RB-9).

// Cap is an upper bound on a count or a size. The zero Cap is "no cap";
// CapAt(0) is a cap of zero.
type Cap struct {
	n   int64
	set bool
}

// CapAt returns the cap n; a negative n is treated as zero.
func CapAt(n int64) Cap {
	return Cap{n: max(n, 0), set: true}
}

// Max returns the cap and whether there is one.
func (c Cap) Max() (int64, bool) { return c.n, c.set }

// Equal reports whether c and d are the same cap (go-cmp uses it too).
func (c Cap) Equal(d Cap) bool { return c == d }

// exceeded reports whether v is past the cap.
func (c Cap) exceeded(v int64) bool { return c.set && v > c.n }

// String formats the cap for people: "none" or the number.
func (c Cap) String() string {
	if !c.set {
		return "none"
	}
	return strconv.FormatInt(c.n, 10)
}

// MarshalJSON writes the cap as a number, null for none.
func (c Cap) MarshalJSON() ([]byte, error) {
	if !c.set {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, c.n, 10), nil
}

// UnmarshalJSON reads a number, or null for none.
func (c *Cap) UnmarshalJSON(b []byte) error {
	var n *int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("cap: %w", err)
	}
	*c = Cap{}
	if n != nil {
		*c = CapAt(*n)
	}
	return nil
}

// Overflow says what an enqueue does when its item would take the entity's
// active items past a cap.
type Overflow uint8

// The overflows.
const (
	// DropHead takes the item and then removes the oldest active items
	// until the entity is within its caps, handing each to the protocol's
	// DeadLetterFunc, reason maxlen (RabbitMQ's default, drop-head).
	DropHead Overflow = iota
	// RejectNew refuses the item: the enqueue is EFULL and stores nothing
	// (reject-publish).
	RejectNew
	// RejectNewDeadLetter refuses the item as RejectNew does and hands it
	// to the protocol's DeadLetterFunc, reason maxlen
	// (reject-publish-dlx).
	RejectNewDeadLetter
)

// String names the overflow for people.
func (o Overflow) String() string {
	switch o {
	case DropHead:
		return "drop-head"
	case RejectNew:
		return "reject-new"
	case RejectNewDeadLetter:
		return "reject-new-dead-letter"
	}
	return "overflow(" + strconv.Itoa(int(o)) + ")"
}

// limited reports whether the policy caps the entity's active items.
func (p *Policy) limited() bool { return p.MaxItems.set || p.MaxBytes.set }

// overLimit reports whether ent's active items, with n more of size bytes,
// are past a cap of its policy.
func (ent *entity) overLimit(n int, size int64) bool {
	return ent.Policy.MaxItems.exceeded(int64(ent.counts[Active]+n)) ||
		ent.Policy.MaxBytes.exceeded(ent.bytes[Active]+size)
}

// maxlen is why an item goes for a length limit.
func (ent *entity) maxlen(what string) DeadLetterReason {
	return DeadLetterReason{Code: "maxlen", Description: what, Rule: ent.Policy.Rules.Limit}
}

// admit checks an item that is to be enqueued in ent, active or handed to
// a consumer, against ent's caps, counting it as one more active item as
// RabbitMQ does before it delivers a publish. An entity whose Overflow
// refuses new items refuses one that would pass a cap: EFULL, and with
// RejectNewDeadLetter the item is handed to the protocol's DeadLetterFunc
// first. It changes nothing else, so a refusal leaves ent as it was.
// Scheduled items are not counted: no protocol caps an entity that
// schedules.
func (e *Engine) admit(ent *entity, it *Item) error {
	p := &ent.Policy
	if !p.limited() || p.Overflow == DropHead || it.State == Scheduled || !ent.overLimit(1, int64(len(it.Body))) {
		return nil
	}
	if p.Overflow == RejectNewDeadLetter {
		e.refuseLocked(ent, *it, ent.maxlen("the entity is full and refuses new items"))
	}
	return Errorf(EFULL, "%s %q is full (%s items, %s bytes at most): it refuses new items",
		kindOrEntity(ent.Kind), ent.Name, p.MaxItems, p.MaxBytes)
}

// makeRoom removes the head of ent's active items while they are past its
// caps, handing each to the protocol's DeadLetterFunc with reason maxlen,
// which puts it where the protocol keeps dead letters or drops it
// (RabbitMQ drops it unless the queue has a dead-letter exchange). It
// returns how many it removed; the item just enqueued is among them when
// it alone is past a cap.
func (e *Engine) makeRoom(ent *entity) int {
	if !ent.Policy.limited() {
		return 0
	}
	n := 0
	for ent.overLimit(0, 0) {
		x := e.takeReady(ent)
		if x == nil {
			break
		}
		why := ent.maxlen("the entity is over its length limit")
		e.deadLetter(x, why)
		n++
	}
	return n
}

// limitChanged applies new caps, after a policy change, to the items ent
// holds: they are trimmed from the head when the overflow that was in
// force, old's, drops the head; an entity that refused new items keeps
// what it holds. RabbitMQ 3.10 reads a changed policy's max-length before
// its overflow, so a queue whose policy turns from nothing to max-length
// with reject-publish is still trimmed (RB-10, checked against the broker).
func (e *Engine) limitChanged(ent *entity, old Policy) {
	if old.Overflow == DropHead {
		e.makeRoom(ent)
	}
}

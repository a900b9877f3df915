package core

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// EventQuery selects events: those with an ID above Since, of Protocol and
// Entity when given, at most Limit of them (0 for all that are kept).
type EventQuery struct {
	Since    uint64
	Protocol string
	Entity   string
	Limit    int
}

// Subscription receives every event recorded after it was made.
type Subscription struct {
	// C delivers the events; it is closed by Unsubscribe.
	C       <-chan Event
	c       chan Event
	dropped atomic.Uint64
}

// Dropped returns how many events did not fit in the subscription's buffer.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

type explainKind uint8

const (
	explainExpired explainKind = iota
	explainLockLost
	explainIdle
	explainDeadLetter
	explainSessionLockLost
	explainSessionItemLockLost
	explainText // Engine.Record's: the reason as given
	explainReleased
)

// explanation holds what an event's reason is made from, so that the text
// is only formatted when someone reads it.
type explanation struct {
	kind explainKind
	why  why
	ttl  TTL
	eff  TTL
	at   time.Time
	text string
}

func (x explanation) render(ev *Event) string {
	switch x.kind {
	case explainLockLost:
		return "lock ran out at " + ev.Due.UTC().Format(time.RFC3339Nano) + "; the item is available again"
	case explainIdle:
		return fmt.Sprintf("unused for %s since %s", x.eff, x.at.UTC().Format(time.RFC3339Nano))
	case explainDeadLetter, explainText:
		return x.text
	case explainSessionLockLost:
		return "the lock of session " + strconv.Quote(ev.Session) + " ran out at " + ev.Due.UTC().Format(time.RFC3339Nano) +
			"; the session is free again"
	case explainSessionItemLockLost:
		return "the lock of its session " + strconv.Quote(ev.Session) + " ran out at " + ev.Due.UTC().Format(time.RFC3339Nano) +
			"; the item is available again"
	}
	s := "TTL ran out (" + x.ttlText() + ")"
	if x.kind == explainReleased {
		s = "hold ran out (" + x.ttlText() + "); passed on"
	}
	if late := ev.Time.Sub(ev.Due); late >= time.Second {
		// Applied late: the clock jumped past the due time, or lapse was down.
		s += ", applied " + FormatDuration(late.Truncate(time.Millisecond)) + " after it was due"
	}
	return s
}

func (x explanation) ttlText() string {
	switch x.why {
	case whyItem:
		return "own TTL " + x.ttl.String()
	case whyCeiling:
		return fmt.Sprintf("own TTL %s cut to the entity's maximum %s", x.ttl, x.eff)
	case whyDefault, whyIgnored:
		return "entity default TTL " + x.eff.String()
	case whyLoaded:
		if x.text != "" {
			return x.text
		}
	}
	return "TTL " + x.eff.String()
}

type eventRec struct {
	ev Event
	ex explanation
}

// eventLog is the bounded log of events (EM-2) and its subscribers.
type eventLog struct {
	// ring holds the last size events, event ID at (ID-1) % size. It grows
	// to size as events come: allocated at once, 10,000 events cost 2.5 MB
	// and a millisecond of every start (issue 25.9).
	ring []eventRec
	size uint64
	next uint64 // ID of the next event; IDs start at 1
	subs map[*Subscription]struct{}
}

func newEventLog(size int) eventLog {
	return eventLog{size: uint64(size), next: 1, subs: make(map[*Subscription]struct{})}
}

func (l *eventLog) record(ev Event, ex explanation) {
	ev.ID = l.next
	l.next++
	if i := (ev.ID - 1) % l.size; i < uint64(len(l.ring)) {
		l.ring[i] = eventRec{ev: ev, ex: ex}
	} else {
		l.ring = append(l.ring, eventRec{ev: ev, ex: ex})
	}
	if len(l.subs) == 0 {
		return
	}
	ev.Reason = ex.render(&ev)
	for s := range l.subs {
		select {
		case s.c <- ev:
		default:
			s.dropped.Add(1)
		}
	}
}

func (l *eventLog) query(q EventQuery) []Event {
	first := q.Since + 1
	if n := l.size; l.next > n && first < l.next-n {
		first = l.next - n
	}
	var out []Event
	for id := first; id < l.next; id++ {
		r := &l.ring[(id-1)%l.size]
		if q.Protocol != "" && r.ev.Protocol != q.Protocol || q.Entity != "" && r.ev.Entity != q.Entity {
			continue
		}
		ev := r.ev
		ev.Reason = r.ex.render(&ev)
		out = append(out, ev)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out
}

func (l *eventLog) subscribe(buf int) *Subscription {
	c := make(chan Event, buf)
	s := &Subscription{C: c, c: c}
	l.subs[s] = struct{}{}
	return s
}

func (l *eventLog) unsubscribe(s *Subscription) {
	if _, ok := l.subs[s]; ok {
		delete(l.subs, s)
		close(s.c)
	}
}

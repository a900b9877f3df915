package core_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// TestSessionsKeepTheirBooksUnderRandomOps runs a seeded random mix of
// every session operation, with the clock moving past locks, expiries and
// scheduled times, and after each step checks the engine's figures against
// its items: each session's counts are those of its items, every locked
// item is locked under a held session until that session's lock, and
// accept-next finds a session exactly when one is free with an available
// item (SS-1, SS-2, SS-3, SS-5).
func TestSessionsKeepTheirBooksUnderRandomOps(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { randomSessionOps(t, seed) })
	}
}

func randomSessionOps(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	f := MustFixture(t)
	p := sessionPolicy(3 * time.Minute)
	p.OnExpire = core.DeadLetter
	q := f.MustCreate("q", p)
	dlq := f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		tx.Enqueue(dlq, it)
	}})
	groups := []string{"A", "B", "C", "D"}
	holders := []string{"h1", "h2", "h3"}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	// an item of the session, mostly a locked one, or a number
	someSeq := func(group string) uint64 {
		its, _ := f.e.Items(f.now(), q, 0)
		var seqs, locked []uint64
		for _, it := range its {
			if it.Group == group {
				seqs = append(seqs, it.Seq)
				if it.State == core.Locked {
					locked = append(locked, it.Seq)
				}
			}
		}
		if len(locked) > 0 && r.IntN(3) > 0 {
			return locked[r.IntN(len(locked))]
		}
		if len(seqs) == 0 {
			return uint64(r.IntN(50))
		}
		return seqs[r.IntN(len(seqs))]
	}
	var log []string
	for step := 0; step < 400; step++ {
		g, h := pick(groups), pick(holders)
		now := f.now()
		// Mostly a held session and its holder, so that most calls get
		// through.
		ss, _ := f.e.Sessions(now, q)
		var held []core.SessionInfo
		for _, s := range ss {
			if s.Holder != "" {
				held = append(held, s)
			}
		}
		if len(held) > 0 && r.IntN(4) > 0 {
			s := held[r.IntN(len(held))]
			g, h = s.ID, s.Holder
		}
		var what string
		switch x := r.IntN(100); {
		case x < 20:
			it := core.Item{Group: g, Body: []byte("x"), Persistent: true}
			if r.IntN(4) == 0 {
				it.State, it.ScheduledAt = core.Scheduled, now.Add(time.Duration(r.IntN(120))*time.Second)
			}
			if r.IntN(3) == 0 {
				it.TTL = core.After(time.Duration(r.IntN(90)) * time.Second)
			}
			_, _, err := f.e.Enqueue(now, q, it)
			what = fmt.Sprint("enqueue ", g, " ", err)
		case x < 30:
			if r.IntN(2) == 0 {
				g = ""
			}
			s, err := f.e.AcceptSession(now, q, g, h, now.Add(time.Duration(10+r.IntN(60))*time.Second))
			what = fmt.Sprint("accept ", g, " ", h, " -> ", s.ID, " ", core.ErrorCode(err))
		case x < 45:
			it, ok, err := f.e.ReceiveSession(now, q, g, h)
			what = fmt.Sprint("receive ", g, " ", h, " -> ", it.Seq, ok, core.ErrorCode(err))
		case x < 52:
			it, ok, _, err := f.e.TakeSession(now, q, g, h)
			what = fmt.Sprint("take ", g, " ", h, " -> ", it.Seq, ok, core.ErrorCode(err))
		case x < 75:
			seq := someSeq(g)
			var err error
			switch r.IntN(6) {
			case 0:
				_, err = f.e.Holder(q, g, h).Complete(now, seq)
			case 1:
				err = f.e.Holder(q, g, h).Release(now, seq)
			case 2:
				err = f.e.Holder(q, g, h).Unlock(now, seq)
			case 3:
				_, err = f.e.Holder(q, g, h).Defer(now, seq)
			case 4:
				_, err = f.e.Holder(q, g, h).DeadLetter(now, seq, core.DeadLetterReason{Code: "test"})
			case 5:
				_, _, _, err = f.e.TakeDeferredSession(now, q, g, h, seq)
			}
			what = fmt.Sprint("settle ", g, " ", h, " ", seq, " ", core.ErrorCode(err))
		case x < 82:
			err := f.e.ReleaseSession(now, q, g, h)
			what = fmt.Sprint("release ", g, " ", h, " ", err)
		case x < 86:
			_, err := f.e.RenewSession(now, q, g, h, now.Add(time.Duration(r.IntN(60))*time.Second))
			what = fmt.Sprint("renew ", g, " ", h, " ", core.ErrorCode(err))
		case x < 90:
			var st []byte
			if r.IntN(3) > 0 {
				st = []byte(fmt.Sprint(step))
			}
			_, err := f.e.SetSessionState(now, q, g, h, st)
			what = fmt.Sprint("state ", g, " ", h, " ", core.ErrorCode(err))
		default:
			d := time.Duration(r.IntN(40)) * time.Second
			f.advance(d)
			what = fmt.Sprint("advance ", d)
		}
		log = append(log, what)
		if msg := checkSessionBooks(f, q); msg != "" {
			t.Fatalf("after step %d (%s): %s\nsteps:\n%v", step, what, msg, log)
		}
	}
}

// checkSessionBooks returns what is wrong with the books of q's sessions,
// "" if nothing.
func checkSessionBooks(f *fixture, q core.EntityKey) string {
	now := f.now()
	ss, err := f.e.Sessions(now, q)
	if err != nil {
		return err.Error()
	}
	its, _ := f.e.Items(now, q, 0)
	byID := map[string]core.SessionInfo{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	counts := map[string]*core.Counts{}
	for _, it := range its {
		c := counts[it.Group]
		if c == nil {
			c = &core.Counts{}
			counts[it.Group] = c
		}
		switch it.State {
		case core.Active:
			c.Active++
			c.ActiveBytes += int64(len(it.Body))
		case core.Scheduled:
			c.Scheduled++
		case core.Locked:
			c.Locked++
			s := byID[it.Group]
			if s.Holder == "" || !it.LockedUntil.Equal(s.LockedUntil) {
				return fmt.Sprintf("item %d locked until %v in session %+v", it.Seq, it.LockedUntil, s)
			}
		case core.Deferred:
			c.Deferred++
		}
	}
	for id, c := range counts {
		if s, ok := byID[id]; !ok || s.Counts != *c {
			return fmt.Sprintf("session %q: counts %+v, its items %+v", id, s.Counts, *c)
		}
	}
	available := false
	for _, s := range ss {
		if counts[s.ID] == nil && s.Holder == "" && !s.HasState {
			return fmt.Sprintf("session %q has no items, holder nor state, but is listed", s.ID)
		}
		if s.Holder == "" && s.Counts.Active > 0 {
			available = true
		}
		if s.Holder != "" && !s.LockedUntil.IsZero() && !s.LockedUntil.After(now) {
			return fmt.Sprintf("session %q is still held after its lock ran out: %+v", s.ID, s)
		}
	}
	// Accept-next succeeds exactly when a session is available; the probe
	// gives the session back at once.
	s, err := f.e.AcceptSession(now, q, "", "probe", now.Add(time.Second))
	if (err == nil) != available {
		return fmt.Sprintf("accept-next: %+v %v, with a session available: %v", s, err, available)
	}
	if err == nil {
		if s.Counts.Active == 0 {
			return fmt.Sprintf("accept-next got session %+v, which has nothing available", s)
		}
		f.e.ReleaseSession(now, q, s.ID, "probe")
	}
	return ""
}

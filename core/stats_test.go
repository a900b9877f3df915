package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// statsOf returns the counters of every entity by name, as Stats gives
// them, after checking that Info gives the same.
func statsOf(tb testing.TB, e *core.Engine, now time.Time) map[string]core.Stats {
	tb.Helper()
	out := map[string]core.Stats{}
	for _, s := range e.Stats(now) {
		out[s.Name] = s.Stats
		in, err := e.Info(now, s.EntityKey)
		if err != nil {
			tb.Fatal(err)
		}
		if d := cmp.Diff(s.Stats, in.Stats); d != "" {
			tb.Errorf("%s: Info's stats differ from Stats' (-Stats +Info):\n%s", s.Name, d)
		}
		if d := cmp.Diff(in.Counts, s.Counts); d != "" {
			tb.Errorf("%s: Stats' counts differ from Info's (-Info +Stats):\n%s", s.Name, d)
		}
	}
	return out
}

func TestStatsCountEveryPath(t *testing.T) {
	type keys struct{ q, dlq core.EntityKey }
	tests := []struct {
		name string
		// onExpire is the queue's expiry action; its TTL is a minute.
		onExpire core.ExpireAction
		run      func(t *testing.T, f *fixture, k keys)
		want     map[string]core.Stats
	}{{
		name: "EnqueueAndSchedule",
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			f.MustEnqueue(k.q, core.Item{State: core.Scheduled, ScheduledAt: f.now().Add(time.Second)}) // SB-4
		},
		want: map[string]core.Stats{"q": {Received: 2}},
	}, {
		name: "ReceiveTakeAndReceiveAgainAfterRelease",
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			f.MustEnqueue(k.q, body("b"))
			a, _ := f.MustReceive(k.q, 0)
			f.drain(k.q)
			if err := f.e.Release(f.now(), k.q, a.Seq); err != nil {
				t.Fatal(err)
			}
			f.MustReceive(k.q, 0)
		},
		want: map[string]core.Stats{"q": {Received: 2, Delivered: 3}},
	}, {
		name: "LockedOnArrival_RB4",
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, core.Item{State: core.Locked})
		},
		want: map[string]core.Stats{"q": {Received: 1, Delivered: 1}},
	}, {
		name: "EnqueueHanded_RB4",
		run: func(t *testing.T, f *fixture, k keys) {
			for _, h := range []core.Handoff{core.HandTaken, core.HandLocked} {
				if _, handed, _, err := f.e.EnqueueHanded(f.now(), k.q, core.Item{TTL: core.After(0)}, h); err != nil || !handed {
					t.Fatalf("EnqueueHanded(%d) = %v %v, want handed", h, handed, err)
				}
			}
			f.MustEnqueue(k.q, body("waits"))
			if _, handed, _, err := f.e.EnqueueHanded(f.now(), k.q, body("behind"), core.HandTaken); err != nil || handed {
				t.Fatalf("EnqueueHanded behind an item = %v %v, want enqueued", handed, err)
			}
		},
		want: map[string]core.Stats{"q": {Received: 4, Delivered: 2}},
	}, {
		name: "PutAndWrite_CO1",
		run: func(t *testing.T, f *fixture, k keys) {
			for range 2 {
				if _, _, err := f.e.Put(f.now(), k.q, core.Item{Key: "k"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := f.e.Write(f.now(), k.q, []string{"k"}, []core.Item{{Key: "x"}, {Key: "y"}}); err != nil {
				t.Fatal(err)
			}
		},
		want: map[string]core.Stats{"q": {Received: 4}},
	}, {
		name: "ExpiryDrops_SB1",
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			f.MustEnqueue(k.q, core.Item{TTL: core.After(time.Second)})
			f.advance(time.Minute)
		},
		want: map[string]core.Stats{"q": {Received: 2, Expired: 2}},
	}, {
		name:     "ExpiryDeadLetters_SB8",
		onExpire: core.DeadLetter,
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			f.advance(time.Minute)
		},
		want: map[string]core.Stats{"q": {Received: 1, Expired: 1, DeadLettered: 1}, "dlq": {Received: 1}},
	}, {
		name: "DeadLetterDropHeadAndRefused_RB9",
		run: func(t *testing.T, f *fixture, k keys) {
			a := f.MustEnqueue(k.q, body("a"))
			if _, err := f.e.DeadLetter(f.now(), k.q, a.Seq, core.DeadLetterReason{Code: "rejected", Rule: "RB-9"}); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				f.MustEnqueue(k.q, body("b"))
			}
			if n, _, err := f.e.DropHead(f.now(), k.q, 1, -1, core.DeadLetterReason{Code: "maxlen", Rule: "RB-9"}); err != nil || n != 2 {
				t.Fatalf("DropHead = %d %v, want 2", n, err)
			}
			if _, err := f.e.DeadLetterRefused(f.now(), k.q, body("c"), core.DeadLetterReason{Code: "maxlen", Rule: "RB-9"}); err != nil {
				t.Fatal(err)
			}
		},
		// A refused item never came in: it is dead-lettered, not received.
		want: map[string]core.Stats{"q": {Received: 4, DeadLettered: 4}, "dlq": {Received: 4}},
	}, {
		name:     "DeferredTakenAfterItsExpiry_SB9",
		onExpire: core.DeadLetter,
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			a, _ := f.MustReceive(k.q, 0)
			if _, err := f.e.Defer(f.now(), k.q, a.Seq); err != nil {
				t.Fatal(err)
			}
			f.advance(2 * time.Minute)
			if _, found, _, err := f.e.TakeDeferred(f.now(), k.q, a.Seq, time.Time{}); err != nil || found {
				t.Fatalf("TakeDeferred = %v %v, want the expired item dead-lettered", found, err)
			}
		},
		want: map[string]core.Stats{"q": {Received: 1, Delivered: 1, Expired: 1, DeadLettered: 1}, "dlq": {Received: 1}},
	}, {
		name: "LockRunsOutAfterTheExpiry_SB7",
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			f.MustReceive(k.q, 2*time.Minute)
			f.advance(2 * time.Minute)
		},
		want: map[string]core.Stats{"q": {Received: 1, Delivered: 1, Expired: 1}},
	}, {
		name: "CompletePurgeAndRemoveAreNeitherExpiriesNorDeadLetters",
		run: func(t *testing.T, f *fixture, k keys) {
			f.MustEnqueue(k.q, body("a"))
			a, _ := f.MustReceive(k.q, 0)
			if _, err := f.e.Complete(f.now(), k.q, a.Seq); err != nil {
				t.Fatal(err)
			}
			f.MustEnqueue(k.q, body("b"))
			if n, _, err := f.e.Purge(f.now(), k.q); err != nil || n != 1 {
				t.Fatalf("Purge = %d %v", n, err)
			}
			c := f.MustEnqueue(k.q, core.Item{State: core.Scheduled, ScheduledAt: f.now().Add(time.Hour)})
			if _, err := f.e.Remove(f.now(), k.q, c.Seq); err != nil {
				t.Fatal(err)
			}
		},
		want: map[string]core.Stats{"q": {Received: 3, Delivered: 1}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := MustFixture(t)
			p := ttlPolicy(time.Minute)
			p.OnExpire = tt.onExpire
			k := keys{q: f.MustCreate("q", p), dlq: f.MustCreate("dlq", core.Policy{})}
			f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
				if _, err := tx.Enqueue(k.dlq, it); err != nil {
					t.Error(err)
				}
			}})
			tt.run(t, f, k)
			want := map[string]core.Stats{"q": {}, "dlq": {}}
			for name, s := range tt.want {
				want[name] = s
			}
			if d := cmp.Diff(want, statsOf(t, f.e, f.now())); d != "" {
				t.Errorf("stats (-want +got):\n%s", d)
			}
		})
	}
}

func TestStatsAreKeptInMemoryOnly(t *testing.T) {
	f := MustFixture(t)
	q := f.MustCreate("q", ttlPolicy(time.Hour))
	f.MustEnqueue(q, body("a"))
	f.MustEnqueue(q, body("b"))
	f.MustReceive(q, 0)

	e := core.NewEngine(core.Config{Store: f.store})
	if err := e.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	got := e.Stats(f.now())
	want := []core.EntityStats{{EntityKey: q, Kind: "queue", Counts: core.Counts{Active: 2, ActiveBytes: 2}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after a restart (-want +got):\n%s", d)
	}
}

// lagRec is one ObserveLag call.
type lagRec struct {
	Protocol string
	Action   core.Action
	Lag      time.Duration
}

// rule: EM-4
func TestObserveLagReportsEveryChangeAtItsDueTime_EM4(t *testing.T) {
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	var got []lagRec
	e := core.NewEngine(core.Config{ObserveLag: func(protocol string, a core.Action, lag time.Duration) {
		got = append(got, lagRec{protocol, a, lag})
	}})
	f := &fixture{tb: t, e: e, clock: clock}
	dlq := core.EntityKey{Protocol: "test", Name: "dlq"}
	e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		if _, err := tx.Enqueue(dlq, it); err != nil {
			t.Error(err)
		}
	}})
	f.MustCreate("dlq", core.Policy{})
	q := f.MustCreate("q", ttlPolicy(time.Minute))
	dl := ttlPolicy(time.Minute)
	dl.OnExpire = core.DeadLetter
	d := f.MustCreate("d", dl)
	idle := ttlPolicy(time.Hour)
	idle.IdleTTL, idle.IdleUses = core.After(10*time.Minute), core.UseSend
	f.MustCreate("idle", idle)

	// Three items share a due time (one timer for the chain) and one has
	// its own; the clock reaches the first due time exactly.
	for range 3 {
		f.MustEnqueue(q, body("chained"))
	}
	f.MustEnqueue(q, core.Item{TTL: core.After(30 * time.Second)})
	f.advance(30 * time.Second)
	// The clock jumps 90s past the others' due time.
	f.advance(2 * time.Minute)
	// A dead letter, due at +3m30s, applied at +4m.
	f.MustEnqueue(d, body("dead"))
	f.advance(90 * time.Second)
	// A lock due at +4m10s, applied at +4m15s; its item (due at +5m)
	// lives on.
	f.MustEnqueue(q, body("locked"))
	f.MustReceive(q, 10*time.Second)
	f.advance(15 * time.Second)
	// The idle entity, last used at t0, is due at +10m. The item back
	// from its lock is deferred: found expired when taken, it is not
	// applied at its due time, so it has no lag.
	f.MustEnqueue(q, body("late"))
	it, _ := f.MustReceive(q, 0)
	if string(it.Body) != "locked" {
		t.Fatalf("received %q, want the item back from its lock", it.Body)
	}
	if _, err := e.Defer(f.now(), q, it.Seq); err != nil {
		t.Fatal(err)
	}
	f.advance(6 * time.Minute)
	if _, found, _, err := e.TakeDeferred(f.now(), q, it.Seq, time.Time{}); err != nil || found {
		t.Fatalf("TakeDeferred = %v %v, want the item expired", found, err)
	}

	want := []lagRec{
		{"test", core.ActionExpired, 0},
		{"test", core.ActionExpired, 90 * time.Second},
		{"test", core.ActionExpired, 90 * time.Second},
		{"test", core.ActionExpired, 90 * time.Second},
		{"test", core.ActionDeadLettered, 30 * time.Second},
		{"test", core.ActionLockLost, 5 * time.Second},
		{"test", core.ActionExpired, 5 * time.Minute}, // "late", due at +5m15s, applied at +10m15s
		{"test", core.ActionDeletedIdle, 15 * time.Second},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("observed lags (-want +got):\n%s", d)
	}
}

// rule: EM-4
func TestObserveLagLosesNothingWhen100kExpireAtOnce_EM4(t *testing.T) {
	const n = 100_000
	var count int
	var sum time.Duration
	e := core.NewEngine(core.Config{ObserveLag: func(protocol string, a core.Action, lag time.Duration) {
		count++
		sum += lag
	}})
	k := core.EntityKey{Protocol: "test", Name: "q"}
	if _, _, err := e.Create(t0, core.Entity{EntityKey: k, Policy: ttlPolicy(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, _, err := e.Enqueue(t0, k, core.Item{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := e.Advance(t0.Add(time.Minute + time.Millisecond)); got != n {
		t.Fatalf("%d events, want %d", got, n)
	}
	if count != n || sum != n*time.Millisecond {
		t.Fatalf("%d lags summing to %s, want %d summing to %s", count, sum, n, n*time.Millisecond)
	}
}

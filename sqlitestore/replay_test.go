package sqlitestore

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// MustOpenWith opens the store in dir with opts and closes it when the
// test ends.
func MustOpenWith(tb testing.TB, dir string, opts Options) *Store {
	tb.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		tb.Fatalf("Open(%q): %v", dir, err)
	}
	tb.Cleanup(func() { MustClose(tb, s) })
	return s
}

var (
	replayA = core.EntityKey{Protocol: core.ServiceBus, Name: "a"}
	replayB = core.EntityKey{Protocol: core.RabbitMQ, Name: "/b"}
	replayC = core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
)

func bodyOp(k core.EntityKey, seq uint64, body string) core.Op {
	op := itemOp(k, seq)
	op.Item.Body = []byte(body)
	return op
}

func delOp(k core.EntityKey, seq uint64) core.Op {
	return core.Op{Kind: core.OpDeleteItem, Key: k, Seq: seq}
}

func stateOp(k core.EntityKey, group, state string) core.Op {
	return core.Op{Kind: core.OpPutSessionState, Key: k, Group: group, State: []byte(state)}
}

var replayD = core.EntityKey{Protocol: core.RabbitMQ, Name: "/d"}

// replayBefore are the writes SQLite holds before the replayed records:
// those of a journal emptied earlier.
func replayBefore() [][]core.Op {
	a, d := replayA, replayD
	return [][]core.Op{
		{entityOp(a), bodyOp(a, 100, "a100"), bodyOp(a, 101, "a101"), stateOp(a, "g0", "s0")},
		{entityOp(d), bodyOp(d, 1, "d1")},
	}
}

// replayScript is a run of Appends, one journal record each, with acks,
// a purge, an entity deleted and made again, session states set and
// cleared, and, with reset, a reset: ops whose replay over their own
// result could differ from their first run if they were not idempotent.
// (After a reset, a replay starts from nothing, as the first run did: a
// script without one is the sharper test.)
func replayScript(reset bool) [][]core.Op {
	a, b, c := replayA, replayB, replayC
	script := [][]core.Op{
		{entityOp(a), entityOp(b)},
		{bodyOp(a, 1, "a1"), bodyOp(a, 2, "a2"), bodyOp(a, 3, "a3"), bodyOp(a, 4, "a4")},
		{bodyOp(b, 1, "b1"), bodyOp(b, 2, "b2"), bodyOp(b, 3, "b3")},
		{stateOp(a, "g1", "s1")},
		{delOp(a, 2)},                           // an ack
		{delOp(b, 1), delOp(b, 2), delOp(b, 3)}, // a purge
		{bodyOp(a, 5, "a5"), bodyOp(a, 1, "a1 again")},
		{{Kind: core.OpDeleteEntity, Key: b}},
		{entityOp(b), bodyOp(b, 1, "b1 of the new /b")},
		{entityOp(c), bodyOp(c, 1, "c1"), stateOp(c, "g", "x")},
	}
	if reset {
		script = append(script, []core.Op{{Kind: core.OpReset}})
	}
	return append(script,
		[]core.Op{entityOp(a), bodyOp(a, 7, "a7"), stateOp(a, "g2", "s2")},
		[]core.Op{entityOp(c), bodyOp(c, 1, "c1 again"), bodyOp(c, 2, "c2"), delOp(c, 1)},
		[]core.Op{{Kind: core.OpDeleteSessionState, Key: a, Group: "g2"}, stateOp(a, "g3", "s3")},
		[]core.Op{entityOp(b), bodyOp(b, 3, "b3 of the third /b"), {Kind: core.OpDeleteEntity, Key: b}},
		[]core.Op{bodyOp(a, 8, "a8"), delOp(a, 7)},
		[]core.Op{bodyOp(c, 2000, "c2000")},
	)
}

// replayEnd is what the store holds at the end, written by hand, so that
// the comparisons do not pass on two equally wrong stores: the bodies of
// each entity's items and its session states; /b is gone.
type replayEnd struct {
	bodies map[core.EntityKey][]string
	states map[core.EntityKey][]string
}

func (want replayEnd) check(t *testing.T, what string, snap storetest.Snapshot) {
	t.Helper()
	if _, ok := snap.Entity(replayB); ok {
		t.Errorf("%s: /b, deleted last, is stored", what)
	}
	for _, k := range []core.EntityKey{replayA, replayC, replayD} {
		var bodies, states []string
		for _, it := range snap.Items[k] {
			bodies = append(bodies, string(it.Body))
		}
		for g, st := range snap.States[k] {
			states = append(states, g+"="+string(st))
		}
		slices.Sort(states)
		if !slices.Equal(bodies, want.bodies[k]) || !slices.Equal(states, want.states[k]) {
			t.Errorf("%s: %v holds %q and states %q; want %q and %q", what, k, bodies, states, want.bodies[k], want.states[k])
		}
	}
}

// acknowledged returns what a store holds once the first n Appends of
// script are acknowledged, by a Memory store that never replays.
func acknowledged(t *testing.T, script [][]core.Op, n int) storetest.Snapshot {
	t.Helper()
	s := MustOpen(t, Memory)
	for _, ops := range script[:n] {
		storetest.MustAppend(t, s, ops...)
	}
	return storetest.MustLoad(t, s)
}

// checkReplayed compares a store's snapshot with what was acknowledged.
// LastSeq is compared as the contract has it, not to the number: at
// least the highest Seq put since the entity was made (how far past it
// depends on how the writes were grouped into transactions).
func checkReplayed(t *testing.T, what string, got, want storetest.Snapshot) {
	t.Helper()
	opts := append(storetest.CmpOptions(), cmpopts.IgnoreFields(core.Entity{}, "LastSeq"))
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("%s differs from what was acknowledged (-acknowledged +%s):\n%s", what, what, diff)
	}
	for _, e := range got.Entities {
		for _, it := range got.Items[e.EntityKey] {
			if e.LastSeq < it.Seq {
				t.Errorf("%s: LastSeq of %v is %d, below its item %d", what, e.EntityKey, e.LastSeq, it.Seq)
			}
		}
	}
}

// A lapse killed after SQLite committed the journal's records and before
// the journal was emptied replays the records over their own result at
// the next Open: at Open itself (a second kill during the replay), after
// the applier's transactions (the journal was full), and at Close. Replay
// is idempotent: the store after replaying twice is the store after
// replaying once, and what was acknowledged (EM-3).
func TestReplayAfterSQLiteCommitBeforeJournalEmptied_EM3(t *testing.T) {
	a, c, d := replayA, replayC, replayD
	for _, tc := range []struct {
		name  string
		reset bool
		end   replayEnd
	}{
		{"WithoutAReset", false, replayEnd{
			bodies: map[core.EntityKey][]string{a: {"a1 again", "a3", "a4", "a5", "a8", "a100", "a101"}, c: {"c2", "c2000"}, d: {"d1"}},
			states: map[core.EntityKey][]string{a: {"g0=s0", "g1=s1", "g3=s3"}, c: {"g=x"}},
		}},
		{"WithAReset", true, replayEnd{
			bodies: map[core.EntityKey][]string{a: {"a8"}, c: {"c2", "c2000"}},
			states: map[core.EntityKey][]string{a: {"g3=s3"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { testReplay(t, replayScript(tc.reset), tc.end) })
	}
}

// testReplay runs script after replayBefore, stops between SQLite's
// commit and the journal's emptying in each of the three places where it
// is emptied, opens what a crash there leaves, and checks it.
func testReplay(t *testing.T, script [][]core.Op, end replayEnd) {
	all := append(replayBefore(), script...)
	want := acknowledged(t, all, len(all))
	end.check(t, "acknowledged", want)
	// live returns a store in a new folder whose SQLite holds
	// replayBefore and whose journal is empty.
	live := func(opts Options) (*Store, string) {
		dir := t.TempDir()
		s := MustOpen(t, dir)
		for _, ops := range replayBefore() {
			storetest.MustAppend(t, s, ops...)
		}
		MustClose(t, s)
		return MustOpenWith(t, dir, opts), dir
	}

	t.Run("AtOpen", func(t *testing.T) {
		crashed, twice := t.TempDir(), t.TempDir()
		s, dir := live(Options{})
		s.connMu.Lock() // the applier stays out of SQLite: the journal holds the script
		for _, ops := range script {
			storetest.MustAppend(t, s, ops...)
		}
		copyFolder(t, dir, crashed)
		s.connMu.Unlock()

		var stops atomic.Int32
		once := MustOpenWith(t, crashed, Options{beforeEmpty: func() {
			if stops.Add(1) == 1 {
				copyFolder(t, crashed, twice) // SQLite has the records, the journal still too
			}
		}})
		if stops.Load() != 1 {
			t.Fatalf("Open did not stop before emptying the journal it applied")
		}
		onceSnap := storetest.MustLoad(t, once)
		checkReplayed(t, "replayed once", onceSnap, want)

		twiceSnap := storetest.MustLoad(t, MustOpen(t, twice))
		checkReplayed(t, "replayed twice", twiceSnap, want)
		end.check(t, "replayed twice", twiceSnap)
		if diff := cmp.Diff(onceSnap, twiceSnap, storetest.CmpOptions()); diff != "" {
			t.Errorf("replayed twice differs from replayed once (-once +twice):\n%s", diff)
		}
	})

	t.Run("AfterTheApplierWithAFullJournal", func(t *testing.T) {
		defer func(l int64) { journalLimit = l }(journalLimit)
		journalLimit = 16 << 10
		crashed := t.TempDir()
		var acked, stops atomic.Int32
		var ackedAtStop int32
		var dir string
		s, dir := live(Options{beforeEmpty: func() {
			if stops.Add(1) == 1 {
				ackedAtStop = acked.Load()
				copyFolder(t, dir, crashed)
			}
		}})
		for _, ops := range script {
			storetest.MustAppend(t, s, ops...)
			acked.Add(1)
		}
		// An Append too large for what is left of the journal: the
		// commit waits for the applier, then empties the journal.
		k := core.EntityKey{Protocol: core.ServiceBus, Name: "large"}
		large := itemOp(k, 1)
		large.Item.Body = make([]byte, journalLimit)
		storetest.MustAppend(t, s, entityOp(k), large)
		if stops.Load() == 0 || ackedAtStop != int32(len(script)) {
			t.Fatalf("the journal was emptied %d times, first after %d Appends; want after the %d of the script", stops.Load(), ackedAtStop, len(script))
		}
		replayed := storetest.MustLoad(t, MustOpen(t, crashed))
		checkReplayed(t, "replayed over the applier's transactions", replayed, want)
		end.check(t, "replayed over the applier's transactions", replayed)
	})

	t.Run("AtClose", func(t *testing.T) {
		crashed := t.TempDir()
		var stops atomic.Int32
		var dir string
		s, dir := live(Options{beforeEmpty: func() {
			if stops.Add(1) == 1 {
				copyFolder(t, dir, crashed)
			}
		}})
		for _, ops := range script {
			storetest.MustAppend(t, s, ops...)
		}
		MustClose(t, s)
		if stops.Load() != 1 {
			t.Fatalf("Close emptied the journal %d times, want once", stops.Load())
		}
		replayed := storetest.MustLoad(t, MustOpen(t, crashed))
		checkReplayed(t, "replayed at Open after Close", replayed, want)
		end.check(t, "replayed at Open after Close", replayed)
	})
}

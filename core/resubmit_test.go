package core_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// recordingStore is a MemStore that keeps the ops of each Append.
type recordingStore struct {
	*core.MemStore
	mu      sync.Mutex
	appends [][]core.Op
}

func (s *recordingStore) Append(ops []core.Op) *core.Commit {
	s.mu.Lock()
	s.appends = append(s.appends, append([]core.Op(nil), ops...))
	s.mu.Unlock()
	return s.MemStore.Append(ops)
}

// last returns the ops of the latest Append, each as "kind entity seq".
func (s *recordingStore) last() []string {
	return s.lastAs(func(op core.Op) string {
		switch op.Kind {
		case core.OpPutItem:
			return fmt.Sprintf("put %s %d", op.Key.Name, op.Item.Seq)
		case core.OpDeleteItem:
			return fmt.Sprintf("delete %s %d", op.Key.Name, op.Seq)
		}
		return fmt.Sprintf("op%d %s", op.Kind, op.Key.Name)
	})
}

// lastAs returns the ops of the latest Append as format writes them,
// leaving out those it writes as "".
func (s *recordingStore) lastAs(format func(core.Op) string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, op := range s.appends[len(s.appends)-1] {
		if f := format(op); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// dlFixture is an engine with a protocol "test" whose dead letters go from
// q (TTL 1 minute, dead-lettering) to dlq, their Meta saying "dead:<source>";
// its Resubmit hook sends them back with their Meta cleared.
type dlFixture struct {
	*fixture
	store     *recordingStore
	q, dlq    core.EntityKey
	available []string
	mu        sync.Mutex
}

func MustDLFixture(tb testing.TB) *dlFixture {
	tb.Helper()
	st := &recordingStore{MemStore: core.NewMemStore()}
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	e := core.NewEngine(core.Config{Store: st})
	f := &dlFixture{fixture: &fixture{tb: tb, e: e, clock: clock, store: st.MemStore}, store: st}
	e.Register("test", f.hooks())
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		tb.Fatal(err)
	}
	p := ttlPolicy(time.Minute)
	p.OnExpire = core.DeadLetter
	f.q = f.MustCreate("q", p)
	f.dlq = f.MustCreate("dlq", core.Policy{})
	return f
}

func (f *dlFixture) hooks() core.ProtocolHooks {
	return core.ProtocolHooks{
		DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
			it.Meta = []byte("dead:" + from.Name)
			it.TTL = core.NoTTL
			tx.Enqueue(core.EntityKey{Protocol: "test", Name: "dlq"}, it)
		},
		Available: func(k core.EntityKey) {
			f.mu.Lock()
			f.available = append(f.available, k.Name)
			f.mu.Unlock()
		},
		Describe: describeTest,
		Resubmit: func(dlq *core.Entity, it core.Item) (string, core.Item, error) {
			d := describeTest(dlq, &it)
			if d.DeadLetter == nil {
				return "", core.Item{}, core.Errorf(core.EINVALID, "item %d is not a dead letter", it.Seq)
			}
			it.Meta = nil
			return d.DeadLetter.Source, it, nil
		},
	}
}

// describeTest describes the test protocol's items: a Meta "dead:<source>"
// makes a dead letter.
func describeTest(ent *core.Entity, it *core.Item) core.Description {
	d := core.Description{Properties: []core.Setting{{Key: "body", Value: string(it.Body)}}}
	if src, ok := strings.CutPrefix(string(it.Meta), "dead:"); ok {
		d.DeadLetter = &core.DeadLetterInfo{Reason: "expired", Description: "dead-lettered from " + src, Source: src, Rule: "T-EXP"}
	}
	return d
}

func (f *dlFixture) takeAvailable() []string {
	f.fixture.hooks()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.available
	f.available = nil
	return out
}

// MustLockItem receives the item of k whose body is body, leaving it
// locked, and releases those received before it.
func (f *dlFixture) MustLockItem(k core.EntityKey, body string) core.Item {
	f.tb.Helper()
	var before []uint64
	defer func() {
		for _, seq := range before {
			if err := f.e.Release(f.now(), k, seq); err != nil {
				f.tb.Fatal(err)
			}
		}
	}()
	for {
		it, ok := f.MustReceive(k, 0)
		if !ok {
			f.tb.Fatalf("no item %q in %s", body, k.Name)
		}
		if string(it.Body) == body {
			return it
		}
		before = append(before, it.Seq)
	}
}

// MustDeadLetter enqueues body in q and lets it expire into dlq; it returns
// the dead letter.
func (f *dlFixture) MustDeadLetter(body string) core.Item {
	f.tb.Helper()
	f.MustEnqueue(f.q, core.Item{Body: []byte(body)})
	f.advance(time.Minute)
	items, err := f.e.Items(f.now(), f.dlq, 0)
	if err != nil || len(items) == 0 || string(items[len(items)-1].Body) != body {
		f.tb.Fatalf("dead-letter queue holds %v (%v), want %q last", items, err, body)
	}
	return items[len(items)-1]
}

// The resubmitted item is a new item of its source: its TTL counts from
// the resubmission and the source's policy sets its expiry, so it expires
// and is dead-lettered again a minute later.
// rule: SB-8
func TestResubmitEnqueuesTheDeadLetterInItsSourceAnew(t *testing.T) {
	f := MustDLFixture(t)
	dl := f.MustDeadLetter("x")
	if d := f.e.Describe(f.dlq, &dl); d.DeadLetter == nil || d.DeadLetter.Source != "q" {
		t.Fatalf("Describe = %+v, want a dead letter from q", d)
	}
	f.advance(30 * time.Second)
	f.takeAvailable()
	to, c, err := f.e.Resubmit(f.now(), f.dlq, dl.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if to != f.q {
		t.Fatalf("resubmitted to %v, want %v", to, f.q)
	}
	if d := cmp.Diff([]string{"q"}, f.takeAvailable()); d != "" {
		t.Fatalf("Available hook (-want +got):\n%s", d)
	}
	// One Append: the write to q and the deletion from dlq, atomically.
	if d := cmp.Diff([]string{"put q 2", "delete dlq 1"}, f.store.last()); d != "" {
		t.Fatalf("ops of the resubmission (-want +got):\n%s", d)
	}
	if items, _ := f.e.Items(f.now(), f.dlq, 0); len(items) != 0 {
		t.Fatalf("dead-letter queue still holds %v", items)
	}
	items, _ := f.e.Items(f.now(), f.q, 0)
	if len(items) != 1 {
		t.Fatalf("q holds %v", items)
	}
	got := items[0]
	if string(got.Body) != "x" || got.Meta != nil || got.State != core.Active || got.Seq != 2 {
		t.Fatalf("resubmitted item = %+v", got)
	}
	now := t0.Add(90 * time.Second)
	if !got.EnqueuedAt.Equal(now) || !got.DueAt.Equal(now.Add(time.Minute)) || got.Rule != "T-DEF" {
		t.Fatalf("resubmitted item enqueued %v due %v rule %q, want %v, %v, T-DEF", got.EnqueuedAt, got.DueAt, got.Rule, now, now.Add(time.Minute))
	}
	f.advance(time.Minute)
	want := []string{"dead-lettered T-EXP 1 1m0s", "dead-lettered T-EXP 2 2m30s"}
	if d := cmp.Diff(want, f.events(f.q)); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

// The source's policy applies to the item's own TTL too: a TTL above the
// source's ceiling is cut to it.
// rule: SB-2
func TestResubmitAppliesTheSourcesCeiling_SB2(t *testing.T) {
	f := MustDLFixture(t)
	f.e.Register("test", core.ProtocolHooks{
		Describe: describeTest,
		Resubmit: func(dlq *core.Entity, it core.Item) (string, core.Item, error) {
			it.Meta, it.TTL = nil, core.After(time.Hour)
			return "q", it, nil
		},
	})
	it := f.MustEnqueue(f.dlq, core.Item{Body: []byte("y"), Meta: []byte("dead:q")})
	if _, _, err := f.e.Resubmit(f.now(), f.dlq, it.Seq); err != nil {
		t.Fatal(err)
	}
	items, _ := f.e.Items(f.now(), f.q, 0)
	if len(items) != 1 || items[0].Rule != "T-CEIL" || !items[0].DueAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("q holds %+v, want one item cut to the ceiling", items)
	}
}

func TestResubmitAllMovesEveryDeadLetterItCan(t *testing.T) {
	f := MustDLFixture(t)
	for _, b := range []string{"a", "b", "c"} {
		f.MustEnqueue(f.q, core.Item{Body: []byte(b)})
	}
	f.advance(time.Minute)
	// Not a dead letter, and one that a receiver holds: both stay.
	f.MustEnqueue(f.dlq, core.Item{Body: []byte("plain")})
	f.MustEnqueue(f.dlq, core.Item{Body: []byte("held"), Meta: []byte("dead:q")})
	f.MustEnqueue(f.dlq, core.Item{Body: []byte("orphan"), Meta: []byte("dead:gone")})
	all, _ := f.e.Items(f.now(), f.dlq, 0)
	held := f.MustLockItem(f.dlq, "held")
	n, c, err := f.e.ResubmitAll(f.now(), f.dlq)
	if err != nil || n != 3 {
		t.Fatalf("ResubmitAll = %d, %v; want 3 of %d", n, err, len(all))
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.drain(f.q); !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("q holds %q", got)
	}
	var left []string
	items, _ := f.e.Items(f.now(), f.dlq, 0)
	for _, it := range items {
		left = append(left, string(it.Body))
	}
	if d := cmp.Diff([]string{"plain", "held", "orphan"}, left); d != "" {
		t.Fatalf("left in dlq (-want +got):\n%s", d)
	}
	// Moving none: the first item's error.
	if _, err := f.e.Complete(f.now(), f.dlq, held.Seq); err != nil {
		t.Fatal(err)
	}
	n, _, err = f.e.ResubmitAll(f.now(), f.dlq)
	if n != 0 || core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("ResubmitAll of what cannot move = %d, %v; want 0 and EINVALID", n, err)
	}
	empty := f.MustCreate("empty", core.Policy{})
	if n, _, err := f.e.ResubmitAll(f.now(), empty); n != 0 || err != nil {
		t.Fatalf("ResubmitAll of an empty entity = %d, %v", n, err)
	}
}

func TestResubmitErrors(t *testing.T) {
	f := MustDLFixture(t)
	dl := f.MustDeadLetter("x")
	plain := f.MustEnqueue(f.dlq, core.Item{Body: []byte("plain")})
	orphan := f.MustEnqueue(f.dlq, core.Item{Body: []byte("orphan"), Meta: []byte("dead:gone")})
	self := f.MustEnqueue(f.dlq, core.Item{Body: []byte("self"), Meta: []byte("dead:dlq")})
	keyed := f.MustEnqueue(f.dlq, core.Item{Key: "k", Body: []byte("keyed"), Meta: []byte("dead:q")})
	f.MustEnqueue(f.q, core.Item{Key: "k"})
	f.MustEnqueue(f.dlq, core.Item{Body: []byte("locked"), Meta: []byte("dead:q")})
	locked := f.MustLockItem(f.dlq, "locked")
	other := core.EntityKey{Protocol: "other", Name: "dlq"}
	if _, _, err := f.e.Create(f.now(), core.Entity{EntityKey: other}); err != nil {
		t.Fatal(err)
	}
	f.e.Enqueue(f.now(), other, core.Item{})
	resubmit := func(k core.EntityKey, seq uint64) error {
		_, _, err := f.e.Resubmit(f.now(), k, seq)
		return err
	}
	for _, c := range []struct {
		name string
		err  error
		code string
		text string
	}{
		{"UnknownEntity", resubmit(core.EntityKey{Protocol: "test", Name: "nope"}, 1), core.ENOTFOUND, `entity "nope" not found`},
		{"UnknownItem", resubmit(f.dlq, 99), core.ENOTFOUND, `item 99 of "dlq" not found`},
		{"NotADeadLetter", resubmit(f.dlq, plain.Seq), core.EINVALID, "is not a dead letter"},
		{"SourceGone", resubmit(f.dlq, orphan.Seq), core.ENOTFOUND, `"gone", the entity it was dead-lettered from, no longer exists`},
		{"AlreadyInItsSource", resubmit(f.dlq, self.Seq), core.EINVALID, "already in the entity it was dead-lettered from"},
		{"KeyTaken", resubmit(f.dlq, keyed.Seq), core.ECONFLICT, `key "k" already exists`},
		{"Locked", resubmit(f.dlq, locked.Seq), core.EPRECONDITION, "is locked by a receiver"},
		{"ProtocolWithoutResubmit", resubmit(other, 1), core.EINVALID, "other has no dead letters to resubmit"},
		{"AllProtocolWithoutResubmit", func() error { _, _, err := f.e.ResubmitAll(f.now(), other); return err }(), core.EINVALID, "no dead letters to resubmit"},
		{"AllUnknownEntity", func() error {
			_, _, err := f.e.ResubmitAll(f.now(), core.EntityKey{Protocol: "test", Name: "nope"})
			return err
		}(), core.ENOTFOUND, "not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := core.ErrorCode(c.err); got != c.code || !strings.Contains(core.ErrorMessage(c.err), c.text) {
				t.Fatalf("error %q %q, want %q containing %q", got, core.ErrorMessage(c.err), c.code, c.text)
			}
		})
	}
	// Every refusal left the dead letters where they were.
	items, _ := f.e.Items(f.now(), f.dlq, 0)
	if len(items) != 6 || items[0].Seq != dl.Seq {
		t.Fatalf("dlq holds %d items after refusals, want 6", len(items))
	}
}

// A resubmission is durable: a restarted engine finds the item in its
// source and not in the dead-letter queue.
func TestResubmitSurvivesARestart(t *testing.T) {
	f := MustDLFixture(t)
	dl := f.MustDeadLetter("x")
	f.MustDeadLetter("y")
	if _, c, err := f.e.Resubmit(f.now(), f.dlq, dl.Seq); err != nil || c.Wait(context.Background()) != nil {
		t.Fatal(err)
	}
	e2 := core.NewEngine(core.Config{Store: f.store})
	e2.Register("test", f.hooks())
	if err := e2.Recover(context.Background(), f.now()); err != nil {
		t.Fatal(err)
	}
	bodies := func(k core.EntityKey) []string {
		items, err := e2.Items(f.now(), k, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			out = append(out, string(it.Body))
		}
		return out
	}
	if d := cmp.Diff([]string{"x"}, bodies(f.q)); d != "" {
		t.Fatalf("q after restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"y"}, bodies(f.dlq)); d != "" {
		t.Fatalf("dlq after restart (-want +got):\n%s", d)
	}
}

func TestDeadLettersExaminesABoundedNumberOfItems(t *testing.T) {
	f := MustDLFixture(t)
	for _, b := range []string{"a", "b", "c"} {
		f.MustDeadLetter(b)
	}
	f.MustEnqueue(f.dlq, core.Item{Body: []byte("plain")})
	f.MustDeadLetter("d")
	bodiesOf := func(s core.DeadLetterScan) []string {
		var out []string
		for i, it := range s.Items {
			out = append(out, string(it.Body)+"<-"+s.Descriptions[i].DeadLetter.Source)
		}
		return out
	}
	for _, c := range []struct {
		name            string
		max, scan       int
		want            []string
		found, examined int
		complete        bool
	}{
		{"All", 0, 0, []string{"a<-q", "b<-q", "c<-q", "d<-q"}, 4, 5, true},
		{"FirstTwo", 2, 0, []string{"a<-q", "b<-q"}, 4, 5, true},
		{"ScanFour", 0, 4, []string{"a<-q", "b<-q", "c<-q"}, 3, 4, false},
		{"ScanFive", 0, 5, []string{"a<-q", "b<-q", "c<-q", "d<-q"}, 4, 5, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := f.e.DeadLetters(f.now(), f.dlq, c.max, c.scan)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, bodiesOf(s)); d != "" {
				t.Errorf("dead letters (-want +got):\n%s", d)
			}
			if s.Found != c.found || s.Examined != c.examined || s.Complete != c.complete {
				t.Errorf("found %d examined %d complete %v, want %d %d %v", s.Found, s.Examined, s.Complete, c.found, c.examined, c.complete)
			}
			for _, it := range s.Items {
				if it.Reason == "" {
					t.Errorf("item %d has no reason", it.Seq)
				}
			}
		})
	}
	if _, err := f.e.DeadLetters(f.now(), core.EntityKey{Protocol: "test", Name: "nope"}, 0, 0); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("DeadLetters of an unknown entity: %v", err)
	}
	if !f.e.CanResubmit("test") || f.e.CanResubmit("other") {
		t.Fatal("CanResubmit is wrong")
	}
}

func TestDescribeOutsideTheLock(t *testing.T) {
	f := MustDLFixture(t)
	it := f.MustEnqueue(f.q, core.Item{Body: []byte("b")})
	// A hook that calls the engine would deadlock if Describe held its lock.
	f.e.Register("test", core.ProtocolHooks{Describe: func(ent *core.Entity, it *core.Item) core.Description {
		en, _ := f.e.Entity(ent.EntityKey)
		return core.Description{Properties: []core.Setting{{Key: "kind", Value: en.Kind}}}
	}})
	got := f.e.Describe(f.q, &it)
	if d := cmp.Diff(core.Description{Properties: []core.Setting{{Key: "kind", Value: "queue"}}}, got); d != "" {
		t.Fatalf("Describe (-want +got):\n%s", d)
	}
	if d := f.e.Describe(core.EntityKey{Protocol: "test", Name: "nope"}, &it); d.Properties != nil || d.DeadLetter != nil {
		t.Fatalf("Describe of an unknown entity = %+v", d)
	}
	if d := f.e.Describe(core.EntityKey{Protocol: "other", Name: "q"}, &it); d.Properties != nil {
		t.Fatalf("Describe without a hook = %+v", d)
	}
}

package core_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// limitFixture is a fixture with entity "q" under policy p and a
// DeadLetterFunc that puts every dead letter in "dlq" with its reason's
// code as Meta.
func limitFixture(t *testing.T, p core.Policy) (f *fixture, q, dlq core.EntityKey) {
	f = MustFixture(t)
	q, dlq = f.MustCreate("q", p), f.MustCreate("dlq", core.Policy{})
	f.e.Register("test", core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		it.Meta = []byte(why.Code)
		if _, err := tx.Enqueue(dlq, it); err != nil {
			t.Error(err)
		}
	}})
	return f, q, dlq
}

func limitPolicy(items int64, o core.Overflow) core.Policy {
	return core.Policy{MaxItems: core.CapAt(items), Overflow: o, Rules: core.RuleIDs{Limit: "RB-9"}}
}

// enqueueAtOnce enqueues each of writers × each items from goroutines of
// their own, all started together, bodies "w<writer>-<n>" in order per
// writer, and returns the errors by body. check runs after every enqueue.
func enqueueAtOnce(f *fixture, q core.EntityKey, writers, each int, check func()) map[string]error {
	var (
		mu    sync.Mutex
		errs  = map[string]error{}
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for w := range writers {
		wg.Go(func() {
			<-start
			for n := range each {
				b := fmt.Sprintf("w%d-%02d", w, n)
				_, _, err := f.e.Enqueue(f.now(), q, body(b))
				mu.Lock()
				errs[b] = err
				mu.Unlock()
				check()
			}
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestLimitRejectNewHoldsUnderConcurrency_RB9(t *testing.T) {
	const max, writers, each = 20, 16, 50
	f, q, dlq := limitFixture(t, limitPolicy(max, core.RejectNew))
	var over sync.Once
	errs := enqueueAtOnce(f, q, writers, each, func() {
		if c, _, _ := f.e.Counts(f.now(), q); c.Active > max {
			over.Do(func() { t.Errorf("%d items in q, over its cap of %d", c.Active, max) })
		}
	})
	stored := 0
	for b, err := range errs {
		switch core.ErrorCode(err) {
		case "":
			stored++
		case core.EFULL:
		default:
			t.Errorf("enqueue %s: %v, want nil or EFULL", b, err)
		}
	}
	c, _, _ := f.e.Counts(f.now(), q)
	if stored != max || c.Active != max {
		t.Errorf("%d enqueues succeeded and q holds %d, want %d and %d", stored, c.Active, max, max)
	}
	// A refused item was never stored: not received, not dead-lettered.
	got := f.e.Stats(f.now())
	for _, s := range got {
		if s.Name == "q" && (s.Stats.Received != max || s.Stats.DeadLettered != 0) {
			t.Errorf("q's stats %+v, want %d received and none dead-lettered", s.Stats, max)
		}
	}
	if d := f.drain(dlq); len(d) != 0 {
		t.Errorf("dead-lettered %q, want nothing (reject-publish)", d)
	}
	// Each stored item was enqueued without an error, and no other.
	for _, b := range f.drain(q) {
		if errs[b] != nil {
			t.Errorf("%s stored, but its enqueue failed: %v", b, errs[b])
		}
	}
}

func TestLimitDropHeadKeepsTheNewestUnderConcurrency_RB9(t *testing.T) {
	const max, writers, each = 20, 16, 50
	f, q, dlq := limitFixture(t, limitPolicy(max, core.DropHead))
	var over sync.Once
	errs := enqueueAtOnce(f, q, writers, each, func() {
		if c, _, _ := f.e.Counts(f.now(), q); c.Active > max {
			over.Do(func() { t.Errorf("%d items in q, over its cap of %d", c.Active, max) })
		}
	})
	for b, err := range errs {
		if err != nil {
			t.Errorf("enqueue %s: %v", b, err)
		}
	}
	// The engine's order is Seq: the items kept are the max newest.
	var seqs []uint64
	kept := map[string]bool{}
	items, err := f.e.Peek(f.now(), q, 0, writers*each)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		seqs = append(seqs, it.Seq)
		kept[string(it.Body)] = true
	}
	en, _ := f.e.Entity(q)
	want := make([]uint64, 0, max)
	for s := en.LastSeq - max + 1; s <= en.LastSeq; s++ {
		want = append(want, s)
	}
	if d := cmp.Diff(want, seqs); d != "" {
		t.Errorf("items kept by Seq (-want +got):\n%s", d)
	}
	// Each writer's kept items are the last it wrote.
	for w := range writers {
		dropped := false
		for n := each - 1; n >= 0; n-- {
			k := kept[fmt.Sprintf("w%d-%02d", w, n)]
			if k && dropped {
				t.Errorf("writer %d: item %d kept after an older one was dropped", w, n)
			}
			dropped = dropped || !k
		}
	}
	dead := f.drain(dlq)
	if len(dead) != writers*each-max {
		t.Errorf("%d dead-lettered, want %d", len(dead), writers*each-max)
	}
	for _, b := range dead {
		if kept[b] {
			t.Errorf("%s both kept and dead-lettered", b)
		}
	}
}

func TestLimitRejectNewStoresNothing_RB9(t *testing.T) {
	p := limitPolicy(2, core.RejectNew)
	p.MaxBytes = core.CapAt(5)
	f, q, dlq := limitFixture(t, p)
	f.MustEnqueue(q, body("aa"))
	before, _ := f.e.Entity(q)
	for _, tt := range []struct {
		name string
		it   core.Item
	}{
		{"OverBytes", body("bbbb")},
		{"AloneOverBytes", body("cccccc")},
	} {
		if _, c, err := f.e.Enqueue(f.now(), q, tt.it); core.ErrorCode(err) != core.EFULL || c != nil {
			t.Errorf("%s: Enqueue = %v, commit %v; want EFULL and no commit", tt.name, err, c)
		}
	}
	f.MustEnqueue(q, body("bbb"))
	if _, _, err := f.e.Enqueue(f.now(), q, body("")); core.ErrorCode(err) != core.EFULL {
		t.Errorf("third item: %v, want EFULL (two items at most)", err)
	}
	// A locked enqueue, an item handed to a consumer, counts as one more
	// too, as RabbitMQ checks a publish before it delivers it.
	if _, _, _, err := f.e.EnqueueHanded(f.now(), q, body("d"), core.HandLocked); core.ErrorCode(err) != core.EFULL {
		t.Errorf("handed: %v, want EFULL", err)
	}
	after, _ := f.e.Entity(q)
	if after.LastSeq != before.LastSeq+1 {
		t.Errorf("LastSeq went from %d to %d: a refused item took a Seq", before.LastSeq, after.LastSeq)
	}
	if got := f.drain(q); !cmp.Equal(got, []string{"aa", "bbb"}) {
		t.Errorf("q holds %q", got)
	}
	if got := f.drain(dlq); len(got) != 0 {
		t.Errorf("dead-lettered %q", got)
	}
}

func TestLimitZeroRefusesEvenAConsumer_RB9(t *testing.T) {
	for _, h := range []core.Handoff{core.HandLocked, core.HandTaken} {
		t.Run(map[core.Handoff]string{core.HandLocked: "Locked", core.HandTaken: "Taken"}[h], func(t *testing.T) {
			f, q, _ := limitFixture(t, limitPolicy(0, core.RejectNew))
			if _, handed, _, err := f.e.EnqueueHanded(f.now(), q, body("a"), h); core.ErrorCode(err) != core.EFULL || handed {
				t.Errorf("EnqueueHanded = handed %v, %v; want EFULL", handed, err)
			}
		})
	}
}

func TestLimitRejectNewDeadLetters_RB9(t *testing.T) {
	f, q, dlq := limitFixture(t, limitPolicy(1, core.RejectNewDeadLetter))
	f.MustEnqueue(q, body("a"))
	if _, _, err := f.e.Enqueue(f.now(), q, body("b")); core.ErrorCode(err) != core.EFULL {
		t.Fatalf("Enqueue = %v, want EFULL", err)
	}
	it, ok, _, err := f.e.Take(f.now(), dlq)
	if err != nil || !ok || string(it.Body) != "b" || string(it.Meta) != "maxlen" {
		t.Fatalf("dead letter = %q (%q) %v %v, want b, reason maxlen", it.Body, it.Meta, ok, err)
	}
	if got := f.drain(q); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("q holds %q", got)
	}
}

func TestLimitDropHeadDeadLettersOldest_RB9(t *testing.T) {
	p := limitPolicy(2, core.DropHead)
	p.MaxBytes = core.CapAt(4)
	f, q, dlq := limitFixture(t, p)
	for _, b := range []string{"a", "b", "c", "dd", "eeeee"} {
		f.MustEnqueue(q, body(b))
	}
	// c goes for the count; dd too for the bytes; eeeee alone is past the
	// byte cap, so it goes as well, as in RabbitMQ.
	if got := f.drain(q); len(got) != 0 {
		t.Errorf("q holds %q, want nothing", got)
	}
	var reasons []string
	for {
		it, ok, _, _ := f.e.Take(f.now(), dlq)
		if !ok {
			break
		}
		reasons = append(reasons, string(it.Body)+":"+string(it.Meta))
	}
	if d := cmp.Diff([]string{"a:maxlen", "b:maxlen", "c:maxlen", "dd:maxlen", "eeeee:maxlen"}, reasons); d != "" {
		t.Errorf("dead letters (-want +got):\n%s", d)
	}
}

// TestLimitPolicyChangeTrims_RB10 pins what a policy change does to the
// items there, as RabbitMQ 3.10 does it: a lower cap trims the head when
// the overflow in force was drop-head, whatever the new one is; an entity
// that refused new items keeps them.
func TestLimitPolicyChangeTrims_RB10(t *testing.T) {
	for _, tt := range []struct {
		name     string
		old, new core.Policy
		want     []string
	}{
		{"NoLimitToDropHead", core.Policy{}, limitPolicy(2, core.DropHead), []string{"d", "e"}},
		{"NoLimitToRejectNew", core.Policy{}, limitPolicy(2, core.RejectNew), []string{"d", "e"}},
		{"RejectNewToLower", limitPolicy(5, core.RejectNew), limitPolicy(2, core.RejectNew), []string{"a", "b", "c", "d", "e"}},
		{"RejectNewToDropHead", limitPolicy(5, core.RejectNew), limitPolicy(2, core.DropHead), []string{"a", "b", "c", "d", "e"}},
		{"DropHeadToLower", limitPolicy(5, core.DropHead), limitPolicy(1, core.RejectNewDeadLetter), []string{"e"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, q, dlq := limitFixture(t, tt.old)
			for _, b := range []string{"a", "b", "c", "d", "e"} {
				f.MustEnqueue(q, body(b))
			}
			if _, _, err := f.e.Update(f.now(), q, func(en *core.Entity) error { en.Policy = tt.new; return nil }); err != nil {
				t.Fatal(err)
			}
			got := f.drain(q)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("q holds (-want +got):\n%s", d)
			}
			if n := len(f.drain(dlq)); n != 5-len(tt.want) {
				t.Errorf("%d dead-lettered, want %d", n, 5-len(tt.want))
			}
		})
	}
}

func TestCapJSON(t *testing.T) {
	type wrap struct {
		C core.Cap `json:"c,omitzero"`
	}
	for _, tt := range []struct {
		c    core.Cap
		json string
	}{
		{core.Cap{}, `{}`},
		{core.CapAt(0), `{"c":0}`},
		{core.CapAt(-3), `{"c":0}`},
		{core.CapAt(1 << 40), `{"c":1099511627776}`},
	} {
		b, err := json.Marshal(wrap{tt.c})
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal(%v) = %s %v, want %s", tt.c, b, err, tt.json)
		}
		var back wrap
		if err := json.Unmarshal(b, &back); err != nil || !back.C.Equal(tt.c) && tt.c != core.CapAt(-3) {
			t.Errorf("Unmarshal(%s) = %v %v", b, back.C, err)
		}
	}
	var w wrap
	if err := json.Unmarshal([]byte(`{"c":null}`), &w); err != nil || w.C != (core.Cap{}) {
		t.Errorf("null: %v %v", w.C, err)
	}
	if err := json.Unmarshal([]byte(`{"c":"1"}`), &w); err == nil {
		t.Error("a string cap was accepted")
	}
}

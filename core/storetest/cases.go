package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

func testEmptyStore(t *testing.T, open Opener) {
	h := newHarness(t, open)
	if snap := h.check(); len(snap.Entities) != 0 {
		t.Fatalf("a new store loaded %d entities, want none", len(snap.Entities))
	}
	MustWait(t, h.s.Append(nil))
	MustWait(t, h.s.Append([]core.Op{}))
	h.checkReopened()
}

// putPutDelete returns, for items 1..n of k, the ops put, delete, put again
// (with another body), and for every other item a last delete, so that the
// outcome depends on the order of every op.
func putPutDelete(k core.EntityKey, n int) []core.Op {
	ops := []core.Op{putEntity(newEntity(k))}
	for seq := uint64(1); seq <= uint64(n); seq++ {
		ops = append(ops,
			putItem(k, newItem(seq, "first")),
			deleteItem(k, seq),
			putItem(k, newItem(seq, "second")))
		if seq%2 == 1 {
			ops = append(ops, deleteItem(k, seq))
		}
	}
	return ops
}

func testAppendOrderAcrossCalls(t *testing.T, open Opener) {
	h := newHarness(t, open)
	var commits []*core.Commit
	for _, op := range putPutDelete(key(core.ServiceBus, "orders"), 100) {
		commits = append(commits, h.append(op))
	}
	for _, c := range commits {
		MustWait(t, c)
	}
	h.checkReopened()
}

func testAppendOrderWithinCall(t *testing.T, open Opener) {
	h := newHarness(t, open)
	h.mustAppend(putPutDelete(key(core.RabbitMQ, "/orders"), 100)...)
	h.checkReopened()
}

func testWaitOnLastCoversEarlier(t *testing.T, open Opener) {
	h := newHarness(t, open)
	k := key(core.Cosmos, "db/container")
	var commits []*core.Commit
	commits = append(commits, h.append(putEntity(newEntity(k))))
	for seq := uint64(1); seq <= 500; seq++ {
		commits = append(commits, h.append(putItem(k, newItem(seq, "x"))))
	}
	MustWait(t, commits[len(commits)-1])
	h.check() // before waiting for the other commits
	for _, c := range commits {
		MustWait(t, c)
	}
	h.checkReopened()
}

func testPutItemReplaces(t *testing.T, open Opener) {
	h := newHarness(t, open)
	k := key(core.ServiceBus, "q")
	first := fullItem(1)
	second := &core.Item{Seq: 1, State: core.Deferred, EnqueuedAt: base}
	h.mustAppend(putEntity(newEntity(k)), putItem(k, first))
	h.check()
	h.mustAppend(putItem(k, second))
	h.checkReopened()
}

func testPutEntityKeepsItems(t *testing.T, open Opener) {
	h := newHarness(t, open)
	k := key(core.RabbitMQ, "/q")
	h.mustAppend(putEntity(newEntity(k)))
	for seq := uint64(1); seq <= 3; seq++ {
		h.mustAppend(putItem(k, newItem(seq, "kept")))
	}
	replaced := fullEntity(k)
	replaced.LastSeq = 0 // lower than the items': LastSeq stays at least 3
	h.mustAppend(putEntity(replaced))
	snap := h.checkReopened()
	if n := len(snap.Items[k]); n != 3 {
		t.Fatalf("after OpPutEntity, %v has %d items, want the 3 it had", k, n)
	}
}

func testDeleteEntityDeletesItems(t *testing.T, open Opener) {
	h := newHarness(t, open)
	gone, kept := key(core.ServiceBus, "gone"), key(core.ServiceBus, "kept")
	for _, k := range []core.EntityKey{gone, kept} {
		h.mustAppend(putEntity(newEntity(k)))
		for seq := uint64(1); seq <= 5; seq++ {
			h.mustAppend(putItem(k, newItem(seq, k.Name)))
		}
	}
	h.mustAppend(deleteEntity(gone))
	h.checkReopened()

	// Made again, the entity starts empty: its old items do not come back.
	h.mustAppend(putEntity(newEntity(gone)))
	h.mustAppend(putItem(gone, newItem(2, "new")))
	h.checkReopened()
}

func testDeleteMissing(t *testing.T, open Opener) {
	h := newHarness(t, open)
	k := key(core.ServiceBus, "q")
	h.mustAppend(putEntity(newEntity(k)), putItem(k, newItem(1, "x")))
	h.mustAppend(deleteItem(k, 99))
	h.mustAppend(deleteItem(key(core.ServiceBus, "nope"), 1))
	h.mustAppend(deleteEntity(key(core.ServiceBus, "nope")))
	h.mustAppend(deleteEntity(key(core.RabbitMQ, "q"))) // same name, other protocol
	h.checkReopened()
}

func testReset(t *testing.T, open Opener) {
	h := newHarness(t, open)
	for _, k := range []core.EntityKey{key(core.ServiceBus, "a"), key(core.RabbitMQ, "/b"), key(core.Cosmos, "db/c")} {
		h.mustAppend(putEntity(newEntity(k)), putItem(k, newItem(1, "x")), putItem(k, newItem(2, "y")))
	}
	h.mustAppend(reset())
	if snap := h.checkReopened(); len(snap.Entities) != 0 {
		t.Fatalf("after OpReset, Load returned %d entities", len(snap.Entities))
	}

	// Ops after a reset in the same Append apply to the emptied store.
	k := key(core.ServiceBus, "a")
	h.mustAppend(putEntity(newEntity(k)), putItem(k, newItem(7, "old")), reset(),
		putEntity(newEntity(k)), putItem(k, newItem(1, "new")))
	h.checkReopened()
}

func testKeyIsProtocolAndName(t *testing.T, open Opener) {
	h := newHarness(t, open)
	keys := []core.EntityKey{
		key(core.ServiceBus, "orders"),
		key(core.RabbitMQ, "orders"),
		key(core.ServiceBus, "orders2"),
		key(core.ServiceBus, "orders/$DeadLetterQueue"),
		key(core.ServiceBus, "Orders"),
		key(core.ServiceBus, "orders%"),
		key(core.ServiceBus, "orders_"),
		key(core.ServiceBus, "topic/Subscriptions/sub"),
		key(core.Cosmos, "ünïcødé ✓/container's \"1\""),
		key(core.ServiceBus, ""),
	}
	for i, k := range keys {
		h.mustAppend(putEntity(newEntity(k)), putItem(k, newItem(1, fmt.Sprint("item of entity ", i))))
	}
	h.mustAppend(deleteItem(keys[0], 1))
	h.mustAppend(deleteEntity(keys[1]))
	h.checkReopened()
}

func testLoadOrder(t *testing.T, open Opener) {
	h := newHarness(t, open)
	seqs := []uint64{5, 2, 9, 10, 100, 1 << 40, core.MaxSeq, 1, 7, 99}
	for _, k := range []core.EntityKey{key(core.Cosmos, "db/b"), key(core.ServiceBus, "z"), key(core.Cosmos, "db/a")} {
		h.mustAppend(putEntity(newEntity(k)))
		for _, seq := range seqs {
			h.mustAppend(putItem(k, newItem(seq, "x")))
		}
	}
	h.checkReopened() // MustLoad checks the order
}

func testLastSeq(t *testing.T, open Opener) {
	h := newHarness(t, open)
	k := key(core.ServiceBus, "q")
	h.mustAppend(putEntity(newEntity(k)))
	for seq := uint64(1); seq <= 7; seq++ {
		h.mustAppend(putItem(k, newItem(seq, "x")))
	}
	h.mustAppend(deleteItem(k, 7))
	h.mustAppend(deleteItem(k, 6))
	h.checkReopened()

	e := newEntity(k)
	e.LastSeq = 2
	h.mustAppend(putEntity(e))
	snap := h.checkReopened()
	if got, _ := snap.Entity(k); got.LastSeq < 7 {
		t.Fatalf("LastSeq = %d after items up to 7 were put and deleted, want at least 7", got.LastSeq)
	}
}

func testLoadCallbackError(t *testing.T, open Opener) {
	h := newHarness(t, open)
	for _, k := range []core.EntityKey{key(core.ServiceBus, "a"), key(core.ServiceBus, "b")} {
		h.mustAppend(putEntity(newEntity(k)), putItem(k, newItem(1, "x")), putItem(k, newItem(2, "y")))
	}
	stop := errors.New("stop here")
	ctx := context.Background()

	entities := 0
	err := h.s.Load(ctx,
		func(core.Entity) error { entities++; return stop },
		func(core.EntityKey, core.Item) error { return nil },
		func(core.EntityKey, core.SessionState) error { return nil })
	if !errors.Is(err, stop) {
		t.Errorf("Load with an entity callback that fails returned %v, want its error", err)
	}
	if entities != 1 {
		t.Errorf("Load called the entity callback %d times, want once: its error ends Load", entities)
	}

	items := 0
	err = h.s.Load(ctx,
		func(core.Entity) error { return nil },
		func(core.EntityKey, core.Item) error { items++; return stop },
		func(core.EntityKey, core.SessionState) error { return nil })
	if !errors.Is(err, stop) {
		t.Errorf("Load with an item callback that fails returned %v, want its error", err)
	}
	if items != 1 {
		t.Errorf("Load called the item callback %d times, want once: its error ends Load", items)
	}
	h.check()
}

func testCommitDoneChan(t *testing.T, open Opener) {
	h := newHarness(t, open)
	c := h.append(putEntity(newEntity(key(core.ServiceBus, "q"))))
	select {
	case <-c.DoneChan():
	case <-time.After(waitTimeout):
		t.Fatal("the Commit of an Append was not done after half a minute")
	}
	MustWait(t, c)
	h.check()
}

func testConcurrentAppends(t *testing.T, open Opener) {
	const writers, appends = 16, 100
	h := newHarness(t, open)
	shared := key(core.ServiceBus, "shared")
	h.mustAppend(putEntity(newEntity(shared)))

	// Each writer appends to its own entity and to the shared one, with
	// Seqs no other writer uses, so the outcome does not depend on how the
	// writers interleave.
	plans := make([][][]core.Op, writers)
	for w := range plans {
		own := key(core.RabbitMQ, fmt.Sprintf("/writer-%d", w))
		plans[w] = append(plans[w], []core.Op{putEntity(newEntity(own))})
		for i := uint64(1); i <= appends; i++ {
			ops := []core.Op{
				putItem(own, newItem(i, "own")),
				putItem(shared, newItem(uint64(w)*appends+i, "shared")),
			}
			if i%10 == 0 {
				ops = append(ops, deleteItem(own, i-5), deleteItem(shared, uint64(w)*appends+i-1))
			}
			plans[w] = append(plans[w], ops)
		}
	}
	var wg sync.WaitGroup
	for _, plan := range plans {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			var last *core.Commit
			for i, ops := range plan {
				c := h.s.Append(ops)
				if i%3 == 0 { // wait for some, not all
					if err := c.Wait(ctx); err != nil {
						t.Errorf("Commit.Wait: %v", err)
						return
					}
				}
				last = c
			}
			if err := last.Wait(ctx); err != nil {
				t.Errorf("Commit.Wait: %v", err)
			}
		})
	}
	wg.Wait()
	for _, plan := range plans {
		for _, ops := range plan {
			h.m.apply(ops...)
		}
	}
	h.checkReopened()
}

package storetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// testRandomOps appends a long, seeded random mix of every op, many Appends
// in flight at once, and compares the store with the model now and then,
// reopening it now and then.
func testRandomOps(t *testing.T, open Opener) {
	const steps, checkEvery, reopenEvery = 3000, 250, 1000
	h := newHarness(t, open)
	g := newGenerator(h.m)
	var pending []*core.Commit
	for step := 1; step <= steps; step++ {
		ops := g.ops(1 + g.r.IntN(4))
		pending = append(pending, h.s.Append(ops)) // the generator applied them to the model
		if step%checkEvery == 0 {
			for _, c := range pending {
				MustWait(t, c)
			}
			pending = pending[:0]
			if step%reopenEvery == 0 {
				h.checkReopened()
			} else {
				h.check()
			}
			if t.Failed() {
				t.Fatalf("the store differs from the model after step %d", step)
			}
		}
	}
}

// generator makes random ops that are valid for the model's state, and
// applies each to the model as it makes it.
type generator struct {
	r    *rand.Rand
	m    *model
	keys []core.EntityKey          // the entities it picks from
	next map[core.EntityKey]uint64 // the last new Seq of each entity
}

func newGenerator(m *model) *generator {
	g := &generator{r: rand.New(rand.NewPCG(3, 14)), m: m, next: map[core.EntityKey]uint64{}}
	for _, p := range []string{core.ServiceBus, core.RabbitMQ, core.Cosmos} {
		for _, n := range []string{"a", "b", "a/b", "c"} {
			g.keys = append(g.keys, key(p, n))
		}
	}
	return g
}

func (g *generator) ops(n int) []core.Op {
	ops := make([]core.Op, 0, n)
	for range n {
		for _, op := range g.op() {
			g.m.apply(op)
			ops = append(ops, op)
		}
	}
	return ops
}

// op makes one op, or the two of a replace that keeps its row.
func (g *generator) op() []core.Op {
	k := g.keys[g.r.IntN(len(g.keys))]
	me := g.m.entities[k]
	if me != nil && len(me.items) > 0 && g.r.IntN(10) == 0 {
		// A keyed item replaced as the engine does it: the old item is
		// deleted and the new one, with a new Seq, put at its row.
		old := storedItems(me.items)[g.r.IntN(len(me.items))]
		g.next[k]++
		it := g.item(g.next[k])
		it.Row = core.RowOf(old.Seq, old.Row)
		return []core.Op{deleteItemAt(k, old.Seq, old.Row), putItem(k, it)}
	}
	return []core.Op{g.oneOp(k, me)}
}

func (g *generator) oneOp(k core.EntityKey, me *modelEntity) core.Op {
	switch x := g.r.IntN(1000); {
	case me == nil || x < 100:
		return putEntity(g.entity(k))
	case x < 130:
		return deleteEntity(k)
	case x < 132:
		return reset()
	case x < 150:
		// Put a session state, or delete one, stored or not.
		group := fmt.Sprint("session-", g.r.IntN(5))
		if g.r.IntN(3) == 0 {
			return deleteState(k, group)
		}
		return putState(k, group, g.bytes())
	case x < 350:
		// Delete a stored item, or now and then one that is not.
		items := storedItems(me.items)
		if len(items) == 0 || g.r.IntN(10) == 0 {
			return deleteItem(k, g.r.Uint64N(g.next[k]+2))
		}
		old := items[g.r.IntN(len(items))]
		return deleteItemAt(k, old.Seq, old.Row)
	case x < 450:
		// Put a stored item again, at its row.
		items := storedItems(me.items)
		if len(items) > 0 {
			old := items[g.r.IntN(len(items))]
			it := g.item(old.Seq)
			it.Row = old.Row
			return putItem(k, it)
		}
		fallthrough
	default:
		g.next[k]++
		return putItem(k, g.item(g.next[k]))
	}
}

// storedItems returns the items in Seq order.
func storedItems(items map[uint64]core.Item) []core.Item {
	out := make([]core.Item, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b core.Item) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

func (g *generator) time() time.Time {
	if g.r.IntN(5) == 0 {
		return time.Time{}
	}
	return base.Add(time.Duration(g.r.Int64N(int64(30 * 24 * time.Hour))))
}

func (g *generator) ttl() core.TTL {
	switch g.r.IntN(5) {
	case 0:
		return core.NoTTL
	case 1:
		return core.Forever
	}
	return core.After(time.Duration(g.r.Int64N(int64(14 * 24 * time.Hour))))
}

func (g *generator) bytes() []byte {
	if g.r.IntN(4) == 0 {
		return nil
	}
	b := make([]byte, g.r.IntN(200))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g *generator) entity(k core.EntityKey) *core.Entity {
	e := &core.Entity{
		EntityKey: k,
		Kind:      []string{"queue", "topic", "container"}[g.r.IntN(3)],
		Durable:   g.r.IntN(2) == 0,
		Policy: core.Policy{
			DefaultTTL: g.ttl(),
			MaxTTL:     g.ttl(),
			OnExpire:   core.ExpireAction(g.r.IntN(2)),
			IdleTTL:    g.ttl(),
			IdleUses:   core.Use(g.r.Uint32()),
		},
		Meta:    g.bytes(),
		Created: g.time(),
		LastSeq: g.r.Uint64N(g.next[k] + 2),
	}
	for i := range g.r.IntN(3) {
		e.Settings = append(e.Settings, core.Setting{Key: fmt.Sprint("k", i), Value: fmt.Sprint(g.r.Int())})
	}
	return e
}

func (g *generator) item(seq uint64) *core.Item {
	return &core.Item{
		Seq:           seq,
		Key:           fmt.Sprint(g.r.IntN(100)),
		Body:          g.bytes(),
		Meta:          g.bytes(),
		State:         core.State(g.r.IntN(4)),
		EnqueuedAt:    g.time(),
		ModifiedAt:    g.time(),
		ScheduledAt:   g.time(),
		TTL:           g.ttl(),
		EffectiveTTL:  g.ttl(),
		DueAt:         g.time(),
		Rule:          fmt.Sprint("SB-", g.r.IntN(12)),
		LockedUntil:   g.time(),
		DeliveryCount: g.r.Uint32(),
		Persistent:    g.r.IntN(2) == 0,
	}
}

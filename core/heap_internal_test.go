package core

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// rule: SB-4 (messages scheduled for the same instant are enqueued in the
// order they were sent): timers due at one instant leave the heap in their
// items' sequence order, whatever order they were set in.
func TestTimersDueTogetherFireInSequenceOrder_SB4(t *testing.T) {
	const n = 200
	for round := range 20 {
		r := rand.New(rand.NewPCG(uint64(round), 1))
		items := make([]*item, n)
		for i := range items {
			items[i] = &item{Item: Item{Seq: uint64(i + 1)}}
			items[i].t = timer{idx: -1, kind: timerSchedule}
			items[i].t.it = items[i]
		}
		var h timerHeap
		for _, i := range r.Perm(n) {
			// Half fall due at 100, the rest at 50 or 150.
			at := int64(100)
			if i%2 == 1 {
				at = 50 + 100*int64(i%4/3)
			}
			h.set(&items[i].t, at)
		}
		var got []uint64
		var ats []int64
		for {
			tm, ok := h.min()
			if !ok {
				break
			}
			h.remove(tm)
			got, ats = append(got, tm.it.Seq), append(ats, tm.at)
		}
		if !slices.IsSorted(ats) {
			t.Fatalf("round %d: due times out of order: %v", round, ats)
		}
		for i := 1; i < len(got); i++ {
			if ats[i] == ats[i-1] && got[i] < got[i-1] {
				t.Fatalf("round %d: at %d, sequence %d fired after %d", round, ats[i], got[i], got[i-1])
			}
		}
	}
}

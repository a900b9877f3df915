package cosmos_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lapse-emulator/lapse/core"
)

// bodyStore is a MemStore that keeps the length and capacity of each item
// body put.
type bodyStore struct {
	*core.MemStore
	mu     sync.Mutex
	bodies [][2]int
}

func (s *bodyStore) Append(ops []core.Op) *core.Commit {
	s.mu.Lock()
	for _, op := range ops {
		if op.Kind == core.OpPutItem {
			s.bodies = append(s.bodies, [2]int{len(op.Item.Body), cap(op.Item.Body)})
		}
	}
	s.mu.Unlock()
	return s.MemStore.Append(ops)
}

// A document's body is written with its system properties into one
// buffer: the room made for them holds them, so it is never copied into
// a larger one (which would leave it with about a quarter more capacity
// than length, or twice as much).
func TestStampedBodyFitsItsBuffer(t *testing.T) {
	st := &bodyStore{MemStore: core.NewMemStore()}
	f := MustServerOnStore(t, st, t0)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	for i, size := range []int{0, 100, 1000, 10000} {
		f.MustCreate(c, "p", map[string]any{"id": fmt.Sprint("doc-", i, strings.Repeat("i", 200)), "pk": "p", "body": strings.Repeat("x", size)})
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.bodies) < 4 {
		t.Fatalf("%d bodies put, want at least 4", len(st.bodies))
	}
	for _, b := range st.bodies[len(st.bodies)-4:] {
		if n, c := b[0], b[1]; c-n > 64 {
			t.Errorf("a body of %d bytes has a capacity of %d: it did not fit the buffer made for it", n, c)
		}
	}
}

package servicebus_test

import (
	"testing"

	"github.com/lapse-emulator/lapse/core/storetest"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Issue 25.5: a create that fails leaves nothing behind, in the engine or
// in the front-end: once the store takes writes again, the same create
// succeeds, rather than finding an entity nobody can see or delete.
func TestFailedCreateLeavesNoOrphan(t *testing.T) {
	st := storetest.NewFailing()
	f := MustServerOnStore(t, st, t0)
	f.MustTopic("t", nil)
	creates := map[string]func() error{
		"queue":        func() error { return f.s.CreateQueue("q", atom.DefaultQueue()) },
		"topic":        func() error { return f.s.CreateTopic("t2", atom.DefaultTopic()) },
		"subscription": func() error { return f.s.CreateSubscription("t", "s", atom.DefaultSubscription()) },
	}
	st.Fail(true)
	for what, create := range creates {
		if err := create(); err == nil {
			t.Errorf("the %s was created on a store that fails", what)
		}
	}
	st.Fail(false)
	for what, create := range creates {
		if err := create(); err != nil {
			t.Errorf("the %s, once the store takes writes: %v", what, err)
		}
	}
}

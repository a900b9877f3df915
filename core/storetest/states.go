package storetest

import (
	"testing"

	"github.com/lapse-emulator/lapse/core"
)

// The cases of session states (core.OpPutSessionState, SS-4).

func testSessionStatesRoundTrip(t *testing.T, open Opener) {
	h := newHarness(t, open)
	k := key(core.ServiceBus, "q")
	other := key(core.ServiceBus, "q2")
	h.mustAppend(putEntity(newEntity(k)), putEntity(newEntity(other)))
	h.mustAppend(
		putState(k, "order-1", []byte("step 1")),
		putState(k, "binary", binary(70_000)), // as large as a message
		putState(k, "empty", []byte{}),        // a state, not none
		putState(k, "nil", nil),               // the same as empty
		putState(k, "", []byte("no id")),
		putState(k, "ünïcødé ✓ \"quoted\" 'single' \x00 nul", []byte("x")),
		putState(other, "order-1", []byte("the other entity's")),
	)
	snap := h.checkReopened()
	if st, ok := snap.States[k]["empty"]; !ok || len(st) != 0 {
		t.Errorf("an empty state loaded as %q (present %v), want an empty state", st, ok)
	}
	if _, ok := snap.States[k]["nil"]; !ok {
		t.Errorf("a state put with nil bytes was not loaded: it is an empty state")
	}
	// Replaced, deleted, deleted again and never put.
	h.mustAppend(putState(k, "order-1", []byte("step 2")), deleteState(k, "binary"))
	h.mustAppend(deleteState(k, "binary"), deleteState(k, "never put"), deleteState(key(core.ServiceBus, "nope"), "x"))
	h.checkReopened()
	// Items come and go without touching the states, and so do entity
	// replacements.
	h.mustAppend(putItem(k, newItem(1, "x")), deleteItem(k, 1), putEntity(fullEntity(k)))
	h.checkReopened()
}

func testSessionStatesGoWithTheirEntity(t *testing.T, open Opener) {
	h := newHarness(t, open)
	gone, kept := key(core.ServiceBus, "gone"), key(core.ServiceBus, "kept")
	for _, k := range []core.EntityKey{gone, kept} {
		h.mustAppend(putEntity(newEntity(k)), putState(k, "s", []byte(k.Name)))
	}
	h.mustAppend(deleteEntity(gone))
	h.checkReopened()
	// Made again, the entity has no states; a state of an entity that is
	// not stored is not stored either.
	h.mustAppend(putEntity(newEntity(gone)))
	h.mustAppend(putState(key(core.ServiceBus, "nope"), "s", []byte("x")))
	if snap := h.checkReopened(); len(snap.States[gone]) != 0 {
		t.Fatalf("a deleted entity's states came back: %v", snap.States[gone])
	}
	h.mustAppend(putState(gone, "s", []byte("new")), reset(), putEntity(newEntity(kept)))
	if snap := h.checkReopened(); len(snap.States) != 0 {
		t.Fatalf("states after OpReset: %v", snap.States)
	}
}

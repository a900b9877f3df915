package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// A handle is live from its entity's creation (or loading) until the
// engine deletes that entity by any path, and is never live again: a new
// entity of the same key has a new handle (issue 25.5).
func TestIssue25_5_HandleIsLiveWhileItsEntityIs(t *testing.T) {
	f := MustFixture(t)
	release := make(chan struct{})
	// The Deleted hook waits: a handle says the entity is gone before the
	// front-end's hook has run.
	f.e.Register("test", core.ProtocolHooks{Deleted: func(core.Entity) { <-release }})
	create := func(name string, p core.Policy) core.Entity {
		t.Helper()
		en, c, err := f.e.Create(f.now(), core.Entity{EntityKey: key(name), Kind: "queue", Durable: true, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !en.Handle.Live() {
			t.Fatalf("%s: a new entity's handle is not live", name)
		}
		return en
	}

	// A client's delete.
	a := create("a", core.Policy{})
	if got, _ := f.e.Entity(a.EntityKey); got.Handle != a.Handle {
		t.Fatal("Entity returns another handle than Create")
	}
	if _, err := f.e.Delete(f.now(), a.EntityKey); err != nil {
		t.Fatal(err)
	}
	if a.Handle.Live() {
		t.Fatal("handle live after Delete")
	}
	a2 := create("a", core.Policy{})
	if a2.Handle == a.Handle || a.Handle.Live() {
		t.Fatal("the entity made anew shares the old one's handle, or revived it")
	}

	// An update keeps the handle.
	up, _, err := f.e.Update(f.now(), a2.EntityKey, func(en *core.Entity) error {
		en.Handle = nil // an update cannot change it
		return nil
	})
	if err != nil || up.Handle != a2.Handle {
		t.Fatalf("Update: %v, handle kept %t", err, up.Handle == a2.Handle)
	}

	// Idle deletion, with the hook still waiting.
	p := core.Policy{IdleTTL: core.After(5 * time.Minute), IdleUses: core.UseReceive}
	b := create("b", p)
	now, _ := f.clock.Advance(4 * time.Minute)
	if !f.e.Alive(now, b.Handle) {
		t.Fatal("Alive false before the idle TTL")
	}
	now, _ = f.clock.Advance(time.Minute)
	if !b.Handle.Live() {
		t.Fatal("Live false before the deletion that fell due is applied")
	}
	// Alive applies what fell due first; Live then agrees.
	if f.e.Alive(now, b.Handle) || b.Handle.Live() {
		t.Fatal("handle live after idle deletion")
	}

	// A reset.
	c := create("c", core.Policy{})
	f.e.Reset(f.now())
	if c.Handle.Live() || a2.Handle.Live() {
		t.Fatal("handle live after Reset")
	}
	close(release)
	f.hooks()

	var nilHandle *core.Handle
	if nilHandle.Live() {
		t.Fatal("a nil handle is live")
	}
}

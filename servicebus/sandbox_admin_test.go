package servicebus_test

// Sandboxes (docs/architecture.md, "Sandboxes"): one listener, the default
// world's, whose server hands a connection or an administration request to
// the world its shared access key name names. These are the tests of the
// administration API; sandbox_test.go has those of AMQP connections.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// sandboxKey is the key of the sandbox of the tests below.
var sandboxKey = sas.Key{Name: "sbx-test1", Value: "c2FuZGJveCBrZXkgb2Ygc2J4LXRlc3Qx"}

// worlds is a default world whose server resolves sandboxKey's name to a
// sandbox's server; the sandbox has a clock, an engine and a server of its
// own, and is reached through the default world's listener only.
type worlds struct {
	def, sbx *fixture
}

// MustWorlds starts a sandbox and a default world that resolves its key.
func MustWorlds(tb testing.TB) *worlds {
	tb.Helper()
	sbx := MustServerWith(tb, func(c *servicebus.Config) { c.Keys = []sas.Key{sandboxKey} })
	def := MustServerWith(tb, func(c *servicebus.Config) {
		c.Resolve = func(name string) *servicebus.Server {
			if name == sandboxKey.Name {
				return sbx.s
			}
			return nil
		}
	})
	return &worlds{def: def, sbx: sbx}
}

// MustOrders creates queue "orders", which dead-letters what expires, in
// each world, through the default world's administration API signed with
// that world's key.
func (w *worlds) MustOrders(tb testing.TB) {
	tb.Helper()
	for _, k := range []sas.Key{servicebus.DefaultKey, sandboxKey} {
		ac := w.def.MustAdminAs(k.Name, k.Value)
		if _, err := ac.CreateQueue(ctx(tb), "orders", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
			DeadLetteringOnMessageExpiration: to.Ptr(true)}}); err != nil {
			tb.Fatalf("creating orders with key %s: %v", k.Name, err)
		}
	}
}

func TestSandbox_AdminRoutesByKeyName(t *testing.T) {
	w := MustWorlds(t)
	w.MustOrders(t) // the second create would be a 409 in one world
	if got := w.sbx.s.Entities(); !slices.Equal(got, []string{"orders"}) {
		t.Fatalf("the sandbox's entities: %v, want [orders]", got)
	}
	if got := w.def.s.Entities(); !slices.Equal(got, []string{"orders"}) {
		t.Fatalf("the default world's entities: %v, want [orders]", got)
	}
	if _, err := w.def.MustAdminAs(sandboxKey.Name, sandboxKey.Value).CreateQueue(ctx(t), "sandbox-only", nil); err != nil {
		t.Fatal(err)
	}
	if got := w.def.s.Entities(); slices.Contains(got, "sandbox-only") {
		t.Fatalf("a queue the sandbox's key created is in the default world: %v", got)
	}
	if _, err := w.def.MustAdmin(servicebus.DefaultKey.Value).GetQueue(ctx(t), "sandbox-only", nil); err != nil {
		t.Fatal(err) // GetQueue answers nil, nil for a queue that is not there
	}
	q, err := w.def.MustAdminAs(sandboxKey.Name, sandboxKey.Value).GetQueue(ctx(t), "sandbox-only", nil)
	if err != nil || q == nil {
		t.Fatalf("the sandbox's GetQueue of its queue: %+v, %v", q, err)
	}
}

func TestSandbox_AdminRefusesWrongKeyAndUnknownKeyName(t *testing.T) {
	w := MustWorlds(t)
	for name, k := range map[string]sas.Key{
		"SandboxKeyNameWrongKey":       {Name: sandboxKey.Name, Value: "d3Jvbmc="},
		"UnknownKeyName":               {Name: "sbx-nope", Value: sandboxKey.Value},
		"DefaultKeyNameWithSandboxKey": {Name: servicebus.DefaultKey.Name, Value: sandboxKey.Value},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.def.MustAdminAs(k.Name, k.Value).CreateQueue(ctx(t), "x", nil)
			if httpStatus(err) != http.StatusUnauthorized {
				t.Fatalf("CreateQueue: %v, want 401", err)
			}
		})
	}
	if got := append(w.def.s.Entities(), w.sbx.s.Entities()...); len(got) != 0 {
		t.Fatalf("entities %v after refused requests", got)
	}
}

func TestSandbox_AdminForgetDropsTheWorldsAPI(t *testing.T) {
	w := MustWorlds(t)
	a := servicebus.NewAdmin(w.def.s, "", nil)
	hs := httptest.NewServer(a.Handler())
	defer hs.Close()
	ac := MustAdminAt(t, hs.URL, sandboxKey.Name, sandboxKey.Value)
	for range 2 {
		if _, err := ac.GetQueue(ctx(t), "orders", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.Worlds(); n != 1 {
		t.Fatalf("after two requests of one sandbox, the API keeps %d worlds, want 1", n)
	}
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.sbx.s.Close(c); err != nil {
		t.Fatal(err)
	}
	a.Forget(w.sbx.s)
	if n := a.Worlds(); n != 0 {
		t.Fatalf("after Forget, the API keeps %d worlds, want 0", n)
	}
	// a request that found the world before its deletion keeps nothing
	if _, err := ac.GetQueue(ctx(t), "orders", nil); err != nil {
		t.Fatal(err)
	}
	if n := a.Worlds(); n != 0 {
		t.Fatalf("a closed world's request left %d worlds kept, want 0", n)
	}
}

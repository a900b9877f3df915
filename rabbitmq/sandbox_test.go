package rabbitmq_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// These tests are the RabbitMQ side of sandboxes (issue 29, "Sandboxes" in
// docs/architecture.md): one listener, worlds chosen by the vhost.

// sbxVhost is the sandbox world's vhost, its id.
const sbxVhost = "sbx-test1"

// worlds are a default world and a sandbox world, each on its own engine
// and clock; the default world's server resolves sbxVhost to the
// sandbox's.
type worlds struct {
	def, sbx *fixture
}

// mustWorlds starts both worlds; sbxUsers are the sandbox's users (nil:
// guest/guest on its vhost).
func mustWorlds(tb testing.TB, sbxUsers ...rabbitmq.User) worlds {
	tb.Helper()
	var w worlds
	w.sbx = mustServerWithConfig(tb, core.NewMemStore(), t0, nil, func(c *rabbitmq.Config) { c.Vhost = sbxVhost }, sbxUsers...)
	w.def = mustServerWithConfig(tb, core.NewMemStore(), t0, nil, func(c *rabbitmq.Config) {
		c.Resolve, c.UserElsewhere = w.resolve, w.sbx.s.Authenticates
	})
	return w
}

// resolve is the default world's resolver.
func (w worlds) resolve(vh string) *rabbitmq.Server {
	if vh == sbxVhost {
		return w.sbx.s
	}
	return nil
}

// dialVhost dials f's listener as user on vhost vh; the connection is
// closed at the end of the test.
func dialVhost(tb testing.TB, f *fixture, user, pass, vh string) (*amqp.Connection, error) {
	tb.Helper()
	conn, err := amqp.Dial("amqp://" + user + ":" + pass + "@" + f.ln.Addr().String() + "/" + url.PathEscape(vh))
	if err == nil {
		tb.Cleanup(func() { conn.Close() })
	}
	return conn, err
}

// mustSandboxChannel opens a channel on a connection to the default
// world's listener that opens the sandbox's vhost.
func (w worlds) mustSandboxChannel(tb testing.TB) (*amqp.Connection, *amqp.Channel) {
	tb.Helper()
	conn, err := dialVhost(tb, w.def, "guest", "guest", sbxVhost)
	if err != nil {
		tb.Fatalf("opening vhost %s through the default world's listener: %v", sbxVhost, err)
	}
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatal(err)
	}
	return conn, ch
}

// ordersInBoth declares queue "orders" with a 60 s TTL in both worlds and
// publishes a message to each, the sandbox's through the default world's
// listener.
func (w worlds) ordersInBoth(tb testing.TB) (sbxCh, defCh *amqp.Channel) {
	tb.Helper()
	ttl := amqp.Table{"x-message-ttl": int32(60000)}
	_, sbxCh = w.mustSandboxChannel(tb)
	MustDeclare(tb, sbxCh, "orders", ttl)
	MustPublish(tb, sbxCh, "", "orders", amqp.Publishing{Body: []byte("sandbox")})
	defCh = w.def.MustChannel()
	MustDeclare(tb, defCh, "orders", ttl)
	MustPublish(tb, defCh, "", "orders", amqp.Publishing{Body: []byte("default")})
	return sbxCh, defCh
}

func TestSandbox_VhostRoutesConnection(t *testing.T) {
	w := mustWorlds(t)
	sbxCh, defCh := w.ordersInBoth(t)
	// The connection is the sandbox server's alone.
	if got := w.sbx.s.Connections(); got != 1 {
		t.Errorf("sandbox server's connections: %d, want 1", got)
	}
	if got := w.def.s.Connections(); got != 1 {
		t.Errorf("default server's connections: %d, want 1 (its own channel's)", got)
	}
	// Each world's engine has its own "orders", named as in the default
	// world (the world's own vhost has no vhost part).
	orders := core.EntityKey{Protocol: core.RabbitMQ, Name: "/orders"}
	for name, f := range map[string]*fixture{"sandbox": w.sbx, "default": w.def} {
		if _, ok := f.e.Entity(orders); !ok {
			t.Errorf("the %s world's engine has no %s", name, orders.Name)
		}
	}
	if got := count(t, sbxCh, "orders"); got != 1 {
		t.Errorf("sandbox's orders: %d messages, want 1", got)
	}
	if got := count(t, defCh, "orders"); got != 1 {
		t.Errorf("default world's orders: %d messages, want 1", got)
	}
}

func TestSandbox_ClockExpiresOnlyItsWorld(t *testing.T) {
	w := mustWorlds(t)
	sbxCh, defCh := w.ordersInBoth(t)
	w.sbx.advance(61 * time.Second)
	if got := drain(t, sbxCh, "orders"); len(got) != 0 {
		t.Errorf("sandbox's orders after 61 s of its clock: %q, want nothing (expired)", got)
	}
	if diff := cmp.Diff([]string{"default"}, drain(t, defCh, "orders")); diff != "" {
		t.Errorf("default world's orders (-want +got):\n%s", diff)
	}
}

func TestSandbox_UnknownVhostNotFound(t *testing.T) {
	w := mustWorlds(t)
	_, err := dialVhost(t, w.def, "guest", "guest", "nowhere")
	if e, ok := err.(*amqp.Error); !ok || e.Code != 530 || e.Reason != "NOT_ALLOWED - vhost nowhere not found" {
		t.Fatalf("vhost known nowhere: %v, want 530 vhost nowhere not found", err)
	}
	if got := w.def.s.Connections() + w.sbx.s.Connections(); got != 0 {
		t.Errorf("%d connections left, want 0", got)
	}
}

func TestSandbox_WorldHasOnlyItsOwnVhost(t *testing.T) {
	w := mustWorlds(t)
	if got := w.sbx.s.Vhost(); got != sbxVhost {
		t.Errorf("sandbox server's Vhost() = %q, want %q", got, sbxVhost)
	}
	// A sandbox has no "/": its own listener (which lapse does not have,
	// the fixture's does) finds none.
	_, err := dialVhost(t, w.sbx, "guest", "guest", "/")
	if e, ok := err.(*amqp.Error); !ok || e.Code != 530 || e.Reason != "NOT_ALLOWED - vhost / not found" {
		t.Fatalf("vhost / of the sandbox: %v, want 530 vhost / not found", err)
	}
	// Its amq.* exchanges are in its own vhost.
	_, ch := w.mustSandboxChannel(t)
	if err := ch.ExchangeDeclarePassive("amq.topic", "topic", true, false, false, false, nil); err != nil {
		t.Fatalf("amq.topic in %s: %v", sbxVhost, err)
	}
}

func TestSandbox_LoginCheckedAgainstSandboxUsers(t *testing.T) {
	// The sandbox's guest has a password of its own: the default world's
	// guest/guest must not open the sandbox's vhost.
	w := mustWorlds(t, rabbitmq.User{Name: "guest", Password: "sandbox-secret", Tags: []string{"administrator"},
		Permissions: map[string]rabbitmq.Permission{sbxVhost: {Configure: ".*", Write: ".*", Read: ".*"}}})
	_, err := dialVhost(t, w.def, "guest", "guest", sbxVhost)
	const refused = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."
	if e, ok := err.(*amqp.Error); !ok || e.Code != 403 || e.Reason != refused {
		t.Fatalf("default world's credentials on the sandbox's vhost: %v, want 403 %q", err, refused)
	}
	// A wrong password is refused at start-ok, as it always was.
	_, err = dialVhost(t, w.def, "guest", "wrong", sbxVhost)
	if e, ok := err.(*amqp.Error); !ok || e.Code != 403 {
		t.Fatalf("wrong password: %v, want 403", err)
	}
	if got := w.def.s.Connections() + w.sbx.s.Connections(); got != 0 {
		t.Errorf("%d connections left, want 0", got)
	}
}

// A user only the sandbox has (its definitions' alice, or its guest with a
// password of its own) logs in through the default world's listener and
// opens the sandbox's vhost; the default world's vhost, and a wrong
// password, are refused as before. Before, the default world refused such
// a login at start-ok, not knowing the vhost yet.
func TestSandbox_SandboxOnlyUserLogsIn(t *testing.T) {
	perm := map[string]rabbitmq.Permission{sbxVhost: {Configure: ".*", Write: ".*", Read: ".*"}}
	w := mustWorlds(t, rabbitmq.User{Name: "alice", Password: "secret", Permissions: perm},
		rabbitmq.User{Name: "guest", Password: "sandbox-secret", Tags: []string{"administrator"}, Permissions: perm})
	for _, u := range [][2]string{{"alice", "secret"}, {"guest", "sandbox-secret"}} {
		conn, err := dialVhost(t, w.def, u[0], u[1], sbxVhost)
		if err != nil {
			t.Fatalf("%s on the sandbox's vhost: %v", u[0], err)
		}
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		MustDeclare(t, ch, "orders-"+u[0], nil)
	}
	if got := w.sbx.s.Connections(); got != 2 {
		t.Errorf("the sandbox serves %d connections, want 2", got)
	}
	const refused = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."
	// The default world has no alice, and its guest another password:
	// refused at connection.open, with the close that says so.
	for _, u := range [][2]string{{"alice", "secret"}, {"guest", "sandbox-secret"}} {
		_, err := dialVhost(t, w.def, u[0], u[1], "/")
		if e, ok := err.(*amqp.Error); !ok || e.Code != 403 || e.Reason != refused {
			t.Errorf("%s on the default vhost: %v, want 403 %q", u[0], err, refused)
		}
	}
	// A password no world knows is refused at start-ok, as it always was.
	if _, err := dialVhost(t, w.def, "alice", "wrong", sbxVhost); err != amqp.ErrCredentials {
		t.Errorf("alice with a wrong password: %v, want %v", err, amqp.ErrCredentials)
	}
	if got := w.def.s.Connections(); got != 0 {
		t.Errorf("the default world serves %d connections, want 0", got)
	}
}

func TestSandbox_ManagementRoutesByVhost(t *testing.T) {
	guest := rabbitmq.User{Name: "guest", Password: "guest", Tags: []string{"administrator"},
		Permissions: map[string]rabbitmq.Permission{sbxVhost: {Configure: ".*", Write: ".*", Read: ".*"}}}
	keeper := rabbitmq.User{Name: "keeper", Password: "sandbox-only", Tags: []string{"administrator"}}
	w := mustWorlds(t, guest, keeper)
	_, defCh := w.ordersInBoth(t)
	MustPublish(t, defCh, "", "orders", amqp.Publishing{Body: []byte("default 2")})
	a := mustManagementWith(t, w.def, func(c *rabbitmq.ManagementConfig) { c.Resolve = w.resolve })

	keys := []string{"name", "vhost", "messages"}
	want := map[string]any{"name": "orders", "vhost": sbxVhost, "messages": n("1")}
	if diff := cmp.Diff(want, obj(t, a.get("/api/queues/"+sbxVhost+"/orders"), keys...)); diff != "" {
		t.Errorf("GET /api/queues/%s/orders (-want +got):\n%s", sbxVhost, diff)
	}
	want = map[string]any{"name": "orders", "vhost": "/", "messages": n("2")}
	if diff := cmp.Diff(want, obj(t, a.get("/api/queues/%2F/orders"), keys...)); diff != "" {
		t.Errorf("GET /api/queues/%%2F/orders (-want +got):\n%s", diff)
	}
	// A list without a vhost shows the default world only.
	list, _ := a.get("/api/queues").([]any)
	if len(list) != 1 || obj(t, list[0], "vhost")["vhost"] != "/" {
		t.Errorf("GET /api/queues: %v, want the default world's orders only", list)
	}
	// The sandbox's paths check the sandbox's users, the default world's
	// its own.
	a.must(http.MethodGet, "/api/vhosts/"+sbxVhost, nil, http.StatusOK)
	if r := a.doAs("keeper", "sandbox-only", http.MethodGet, "/api/queues/"+sbxVhost+"/orders", nil); r.status != http.StatusOK {
		t.Errorf("the sandbox's own user on its queue: %d %s, want 200", r.status, r.body)
	}
	if r := a.doAs("keeper", "sandbox-only", http.MethodGet, "/api/queues/%2F/orders", nil); r.status != http.StatusUnauthorized {
		t.Errorf("the sandbox's own user on the default world's queue: %d %s, want 401", r.status, r.body)
	}
	// A vhost known nowhere is the default world's 404.
	a.must(http.MethodGet, "/api/queues/nowhere/orders", nil, http.StatusNotFound)
	// Forgetting the sandbox drops its API; the next request makes it anew.
	a.m.Forget(w.sbx.s)
	a.must(http.MethodGet, "/api/queues/"+sbxVhost+"/orders", nil, http.StatusOK)
}

func TestSandbox_CloseClosesMovedConnection(t *testing.T) {
	w := mustWorlds(t)
	conn, _ := w.mustSandboxChannel(t)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.sbx.s.Close(ctx); err != nil {
		t.Fatalf("closing the sandbox's server: %v", err)
	}
	select {
	case e := <-closed:
		if e == nil || e.Code != 320 {
			t.Errorf("connection closed with %v, want 320 CONNECTION_FORCED", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connection to the sandbox's vhost stayed open after its server closed")
	}
	// The default world serves on.
	sync(t, w.def.MustChannel())
}

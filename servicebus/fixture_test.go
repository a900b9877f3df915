package servicebus_test

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	gosync "sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// t0 is when every fixture's frozen clock starts.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixture is a Service Bus front-end on a random port, on an engine with a
// frozen clock that tests advance.
type fixture struct {
	tb      testing.TB
	clock   *core.Clock
	e       *core.Engine
	store   *core.MemStore
	s       *servicebus.Server
	ln      net.Listener
	admin   *httptest.Server
	connStr string
	wg      gosync.WaitGroup
}

// MustServer starts a server on a new engine and store.
func MustServer(tb testing.TB) *fixture {
	tb.Helper()
	return MustServerOn(tb, core.NewMemStore(), t0)
}

// MustServerOn starts a server on store, its clock frozen at now.
func MustServerOn(tb testing.TB, store *core.MemStore, now time.Time) *fixture {
	tb.Helper()
	return newFixture(tb, store, now, nil)
}

// MustServerOnStore is MustServerOn on any store.
func MustServerOnStore(tb testing.TB, store core.Store, now time.Time) *fixture {
	tb.Helper()
	return newFixture(tb, store, now, nil)
}

// MustServerWith starts a server like MustServer, its Config changed by set.
func MustServerWith(tb testing.TB, set func(*servicebus.Config)) *fixture {
	tb.Helper()
	return newFixture(tb, core.NewMemStore(), t0, set)
}

// newFixture starts a server on store, its clock frozen at now, its Config
// changed by set when set is not nil.
func newFixture(tb testing.TB, store core.Store, now time.Time, set func(*servicebus.Config)) *fixture {
	tb.Helper()
	return newFixtureWithHooks(tb, store, now, set, nil)
}

// newFixtureWithHooks is newFixture with the server's hooks passed through
// wrap (when not nil) before the engine gets them.
func newFixtureWithHooks(tb testing.TB, store core.Store, now time.Time, set func(*servicebus.Config), wrap func(core.ProtocolHooks) core.ProtocolHooks) *fixture {
	tb.Helper()
	f := &fixture{tb: tb}
	f.store, _ = store.(*core.MemStore)
	f.clock = core.NewClock(func() time.Time { return now })
	f.clock.Freeze()
	f.e = core.NewEngine(core.Config{Store: store})
	cfg := servicebus.Config{Engine: f.e, Now: f.clock.Now, Version: "test"}
	if set != nil {
		set(&cfg)
	}
	f.s = servicebus.New(cfg)
	h := f.s.Hooks()
	if wrap != nil {
		h = wrap(h)
	}
	f.e.Register(core.ServiceBus, h)
	if err := f.e.Recover(context.Background(), f.clock.Now()); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f.ln = ln
	f.connStr = "Endpoint=sb://" + ln.Addr().String() + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
	f.admin = httptest.NewServer(servicebus.NewAdmin(f.s, "", nil).Handler())
	f.wg.Add(1)
	go f.accept()
	tb.Cleanup(f.close)
	return f
}

func (f *fixture) accept() {
	defer f.wg.Done()
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			var h [8]byte
			if _, err := io.ReadFull(nc, h[:]); err != nil {
				nc.Close()
				return
			}
			f.s.ServeConn(nc, h)
		}()
	}
}

func (f *fixture) close() {
	f.ln.Close()
	f.admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.s.Close(ctx); err != nil {
		f.tb.Errorf("closing the server: %v", err)
	}
	f.wg.Wait()
}

// advance moves the clock and applies what fell due, as the expiry runner does.
func (f *fixture) advance(d time.Duration) {
	f.tb.Helper()
	now, err := f.clock.Advance(d)
	if err != nil {
		f.tb.Fatal(err)
	}
	if _, err := f.e.ApplyDue(context.Background(), now); err != nil {
		f.tb.Fatal(err)
	}
}

// MustClient returns an azservicebus client with the emulator's
// connection string, closed at the end of the test.
func (f *fixture) MustClient() *azservicebus.Client {
	f.tb.Helper()
	return f.MustClientWith(nil)
}

// MustClientWith returns an azservicebus client like MustClient, with
// options.
func (f *fixture) MustClientWith(opts *azservicebus.ClientOptions) *azservicebus.Client {
	f.tb.Helper()
	c, err := azservicebus.NewClientFromConnectionString(f.connStr, opts)
	if err != nil {
		f.tb.Fatal(err)
	}
	f.tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// MustQueue creates a queue, the service's defaults changed by set.
func (f *fixture) MustQueue(name string, set func(*atom.QueueProperties)) {
	f.tb.Helper()
	p := atom.DefaultQueue()
	if set != nil {
		set(&p)
	}
	if err := f.s.CreateQueue(name, p); err != nil {
		f.tb.Fatal(err)
	}
}

// MustTopic creates a topic and subscriptions with the default rule.
func (f *fixture) MustTopic(name string, set func(*atom.TopicProperties), subs ...string) {
	f.tb.Helper()
	p := atom.DefaultTopic()
	if set != nil {
		set(&p)
	}
	if err := f.s.CreateTopic(name, p); err != nil {
		f.tb.Fatal(err)
	}
	for _, s := range subs {
		f.MustSubscription(name, s, nil)
	}
}

// MustSubscription creates a subscription.
func (f *fixture) MustSubscription(topic, name string, set func(*atom.SubscriptionProperties)) {
	f.tb.Helper()
	p := atom.DefaultSubscription()
	if set != nil {
		set(&p)
	}
	if err := f.s.CreateSubscription(topic, name, p); err != nil {
		f.tb.Fatal(err)
	}
}

// ctx returns a context that ends with the test or after 20 s.
func ctx(tb testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	tb.Cleanup(cancel)
	return c
}

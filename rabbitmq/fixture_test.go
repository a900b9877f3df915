package rabbitmq_test

import (
	"context"
	"io"
	"net"
	gosync "sync"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq"
	amqp "github.com/rabbitmq/amqp091-go"
)

// t0 is when every fixture's frozen clock starts.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixture is a RabbitMQ front-end on a random port, on an engine with a
// frozen clock that tests advance.
type fixture struct {
	tb    testing.TB
	clock *core.Clock
	e     *core.Engine
	store *core.MemStore
	s     *rabbitmq.Server
	ln    net.Listener
	url   string
	wg    gosync.WaitGroup
}

// MustServer starts a server on a new engine and store.
func MustServer(tb testing.TB) *fixture {
	tb.Helper()
	return MustServerOn(tb, core.NewMemStore(), t0)
}

// MustServerOn starts a server on store (a restart when the store holds
// what an earlier server wrote), its clock frozen at now.
func MustServerOn(tb testing.TB, store *core.MemStore, now time.Time, users ...rabbitmq.User) *fixture {
	tb.Helper()
	f := MustServerOnStore(tb, store, now, users...)
	f.store = store
	return f
}

// MustServerOnStore is MustServerOn on any store.
func MustServerOnStore(tb testing.TB, store core.Store, now time.Time, users ...rabbitmq.User) *fixture {
	tb.Helper()
	return mustServerWithHooks(tb, store, now, nil, users...)
}

// mustServerWithHooks is MustServerOnStore with the server's hooks passed
// through wrap (when not nil) before the engine gets them.
func mustServerWithHooks(tb testing.TB, store core.Store, now time.Time, wrap func(core.ProtocolHooks) core.ProtocolHooks, users ...rabbitmq.User) *fixture {
	tb.Helper()
	return mustServerWithConfig(tb, store, now, wrap, func(*rabbitmq.Config) {}, users...)
}

// mustServerWithConfig is mustServerWithHooks with the server's Config
// passed through set before the server is made.
func mustServerWithConfig(tb testing.TB, store core.Store, now time.Time, wrap func(core.ProtocolHooks) core.ProtocolHooks,
	set func(*rabbitmq.Config), users ...rabbitmq.User) *fixture {
	tb.Helper()
	f := &fixture{tb: tb}
	f.clock = core.NewClock(func() time.Time { return now })
	f.clock.Freeze()
	f.e = core.NewEngine(core.Config{Store: store})
	cfg := rabbitmq.Config{Engine: f.e, Now: f.clock.Now, Version: "test", Users: users}
	set(&cfg)
	f.s = rabbitmq.New(cfg)
	h := f.s.Hooks()
	if wrap != nil {
		h = wrap(h)
	}
	f.e.Register(core.RabbitMQ, h)
	if err := f.e.Recover(context.Background(), f.clock.Now()); err != nil {
		tb.Fatal(err)
	}
	if err := f.s.Start(); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f.ln = ln
	f.url = "amqp://guest:guest@" + ln.Addr().String() + "/"
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

// MustDial opens a connection with amqp091-go, closed at the end of the test.
func (f *fixture) MustDial() *amqp.Connection {
	f.tb.Helper()
	conn, err := amqp.Dial(f.url)
	if err != nil {
		f.tb.Fatal(err)
	}
	f.tb.Cleanup(func() { conn.Close() })
	return conn
}

// MustChannel opens a channel on a new connection.
func (f *fixture) MustChannel() *amqp.Channel {
	f.tb.Helper()
	ch, err := f.MustDial().Channel()
	if err != nil {
		f.tb.Fatal(err)
	}
	return ch
}

// MustDeclare declares a queue.
func MustDeclare(tb testing.TB, ch *amqp.Channel, name string, args amqp.Table) amqp.Queue {
	tb.Helper()
	q, err := ch.QueueDeclare(name, false, false, false, false, args)
	if err != nil {
		tb.Fatal(err)
	}
	return q
}

// MustPublish publishes a message, then makes a round trip on the channel
// so that the server has taken the message before the test goes on (a
// publish has no reply): the clock must not move before it is enqueued.
func MustPublish(tb testing.TB, ch *amqp.Channel, exchange, key string, p amqp.Publishing) {
	tb.Helper()
	if err := ch.PublishWithContext(context.Background(), exchange, key, false, false, p); err != nil {
		tb.Fatal(err)
	}
	sync(tb, ch)
}

// sync makes a round trip on the channel (a passive declare of amq.direct).
func sync(tb testing.TB, ch *amqp.Channel) {
	tb.Helper()
	if err := ch.ExchangeDeclarePassive("amq.direct", "direct", true, false, false, false, nil); err != nil {
		tb.Fatal(err)
	}
}

// count returns the queue's ready message count (passive declare).
func count(tb testing.TB, ch *amqp.Channel, name string) int {
	tb.Helper()
	q, err := ch.QueueDeclarePassive(name, false, false, false, false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return q.Messages
}

// drain gets every message of a queue with basic.get and returns their bodies.
func drain(tb testing.TB, ch *amqp.Channel, name string) []string {
	tb.Helper()
	var out []string
	for {
		d, ok, err := ch.Get(name, true)
		if err != nil {
			tb.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, string(d.Body))
	}
}

// receive waits for n deliveries.
func receive(tb testing.TB, msgs <-chan amqp.Delivery, n int) []amqp.Delivery {
	tb.Helper()
	var out []amqp.Delivery
	for len(out) < n {
		select {
		case d, ok := <-msgs:
			if !ok {
				tb.Fatalf("deliveries closed after %d of %d", len(out), n)
			}
			out = append(out, d)
		case <-time.After(5 * time.Second):
			tb.Fatalf("got %d of %d deliveries", len(out), n)
		}
	}
	return out
}

// closeErr returns the *amqp.Error a channel was closed with.
func closeErr(tb testing.TB, err error) *amqp.Error {
	tb.Helper()
	ae, ok := err.(*amqp.Error)
	if !ok {
		tb.Fatalf("error %v (%T), want an *amqp.Error", err, err)
	}
	return ae
}

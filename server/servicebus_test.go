package server

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/dashboard"
)

// sbConfigJSON is the official Service Bus emulator's sample Config.json,
// unchanged: queue.1 and topic.1 with subscription.1 to subscription.4.
const sbConfigJSON = "../servicebus/atom/testdata/Config.json"

// sbConfigEntities are the engine's entities for sbConfigJSON, as
// sbEntityNames lists them: every queue and subscription has a dead-letter
// queue and a transfer dead-letter queue.
var sbConfigEntities = []string{
	"deadletterqueue queue.1/$DeadLetterQueue",
	"deadletterqueue topic.1/Subscriptions/subscription.1/$DeadLetterQueue",
	"deadletterqueue topic.1/Subscriptions/subscription.2/$DeadLetterQueue",
	"deadletterqueue topic.1/Subscriptions/subscription.3/$DeadLetterQueue",
	"deadletterqueue topic.1/Subscriptions/subscription.4/$DeadLetterQueue",
	"queue queue.1",
	"subscription topic.1/Subscriptions/subscription.1",
	"subscription topic.1/Subscriptions/subscription.2",
	"subscription topic.1/Subscriptions/subscription.3",
	"subscription topic.1/Subscriptions/subscription.4",
	"topic topic.1",
	"transferdeadletterqueue queue.1/$Transfer/$DeadLetterQueue",
	"transferdeadletterqueue topic.1/Subscriptions/subscription.1/$Transfer/$DeadLetterQueue",
	"transferdeadletterqueue topic.1/Subscriptions/subscription.2/$Transfer/$DeadLetterQueue",
	"transferdeadletterqueue topic.1/Subscriptions/subscription.3/$Transfer/$DeadLetterQueue",
	"transferdeadletterqueue topic.1/Subscriptions/subscription.4/$Transfer/$DeadLetterQueue",
}

// sbConnString is the official emulator's connection string; only the
// host and port differ.
func sbConnString(hostport string) string {
	return "Endpoint=sb://" + hostport + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"
}

// sbContext returns a context that ends with the test or after 30 s.
func sbContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// MustSBClient returns an azservicebus client of m's AMQP port, closed at
// the end of the test.
func MustSBClient(tb testing.TB, m *Main) *azservicebus.Client {
	tb.Helper()
	return mustSBClientAt(tb, dialable(m.amqp.Addr().String()))
}

func mustSBClientAt(tb testing.TB, hostport string) *azservicebus.Client {
	tb.Helper()
	c, err := azservicebus.NewClientFromConnectionString(sbConnString(hostport), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// plainHTTP sends the admin client's https requests over plain HTTP, as
// the official emulator's Go sample does (admin.Client v1.11.0 builds
// https URLs even with UseDevelopmentEmulator=true).
type plainHTTP struct{ base *http.Transport }

func (t plainHTTP) Do(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *r.URL
	u.Scheme = "http"
	r.URL = &u
	return t.base.RoundTrip(r)
}

// MustSBAdmin returns the Go SDK's admin client of the servicebusAdmin
// address that m's GET /api/info reports.
func MustSBAdmin(tb testing.TB, m *Main) *admin.Client {
	tb.Helper()
	var info dashboard.Info
	if got := MustAPI(tb, m).get("/api/info", &info); got != 200 {
		tb.Fatalf("GET /api/info: %d", got)
	}
	l := info.Listeners["servicebusAdmin"]
	if !l.Served {
		tb.Fatalf("/api/info: servicebusAdmin %+v is not served", l)
	}
	return mustSBAdminAt(tb, dialable(l.Addr))
}

// mustSBAdminAt returns the Go SDK's admin client of the Service Bus
// administration API at hostport, over plain HTTP and without retries.
func mustSBAdminAt(tb testing.TB, hostport string) *admin.Client {
	tb.Helper()
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	c, err := admin.NewClientFromConnectionString(sbConnString(hostport), &admin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: plainHTTP{base: tr},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// MustSBSend sends msgs to a queue or topic, each acknowledged by lapse.
func MustSBSend(tb testing.TB, c *azservicebus.Client, to string, msgs ...*azservicebus.Message) {
	tb.Helper()
	s, err := c.NewSender(to, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, msg := range msgs {
		if err := s.SendMessage(sbContext(tb), msg, nil); err != nil {
			tb.Fatalf("send to %s: %v", to, err)
		}
	}
}

// sbPeek returns the bodies of every message of a queue or sub-queue,
// without waiting for any.
func sbPeek(tb testing.TB, c *azservicebus.Client, queue string, sub azservicebus.SubQueue) []string {
	tb.Helper()
	r, err := c.NewReceiverForQueue(queue, &azservicebus.ReceiverOptions{SubQueue: sub})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close(context.Background())
	from := int64(0)
	msgs, err := r.PeekMessages(sbContext(tb), 100, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &from})
	if err != nil {
		tb.Fatalf("peek %s: %v", queue, err)
	}
	out := []string{}
	for _, msg := range msgs {
		out = append(out, string(msg.Body))
	}
	return out
}

// sbEntityNames lists the Service Bus entities of GET /api/entities.
func sbEntityNames(tb testing.TB, a *api) []string {
	tb.Helper()
	var ents []dashboard.EntityView
	if got := a.get("/api/entities", &ents); got != 200 {
		tb.Fatalf("GET /api/entities: %d", got)
	}
	out := []string{}
	for _, e := range ents {
		if e.Protocol == core.ServiceBus {
			out = append(out, e.Kind+" "+e.Name)
		}
	}
	slices.Sort(out)
	return out
}

// rule: SB-1 (a message's TTL counts from its enqueue), SB-2 (the entity's
// default TTL for a message without one), SB-8 (expired messages of an
// entity without DeadLetteringOnMessageExpiration are dropped). Through
// Main: the official emulator's Config.json declares queue.1 (PT1H,
// DeadLetteringOnMessageExpiration false); azservicebus sends two messages
// with the official connection string; POST /api/clock/advance P14D
// expires both, and the event log says so.
func TestServiceBusConfigJSONExpiry_SB1_SB2_SB8(t *testing.T) {
	m := MustStart(t, "--servicebus-config", sbConfigJSON, "--clock", "frozen")
	a := MustAPI(t, m)
	c := MustSBClient(t, m)
	t0 := m.Clock.Now()

	ttl := 10 * time.Minute
	MustSBSend(t, c, "queue.1",
		&azservicebus.Message{Body: []byte("ttl 10m"), TimeToLive: &ttl},
		&azservicebus.Message{Body: []byte("no ttl")})
	if got := sbPeek(t, c, "queue.1", 0); !slices.Equal(got, []string{"ttl 10m", "no ttl"}) {
		t.Fatalf("queue.1 before the clock moves: %q, want both messages", got)
	}

	var st dashboard.ClockState
	if got := a.post("/api/clock/advance", `{"by":"P14D"}`, &st); got != 200 {
		t.Fatalf("POST /api/clock/advance P14D: %d", got)
	}
	if st.Applied == nil || *st.Applied != 2 {
		t.Errorf("advance applied %v, want 2", st.Applied)
	}
	if got := sbPeek(t, c, "queue.1", 0); len(got) != 0 {
		t.Errorf("queue.1 after 14 days: %q, want nothing", got)
	}
	if got := sbPeek(t, c, "queue.1", azservicebus.SubQueueDeadLetter); len(got) != 0 {
		t.Errorf("queue.1's dead-letter queue after 14 days: %q, want nothing (DeadLetteringOnMessageExpiration is false)", got)
	}

	var evs []core.Event
	if got := a.get("/api/events", &evs); got != 200 {
		t.Fatalf("GET /api/events: %d", got)
	}
	now := t0.Add(14 * 24 * time.Hour)
	want := []core.Event{
		{ID: 1, Time: now, Due: t0.Add(10 * time.Minute), Protocol: core.ServiceBus, Entity: "queue.1", Item: 1, Rule: "SB-8",
			Action: core.ActionExpired, Reason: "TTL ran out (own TTL 10m), applied 13d23h50m after it was due"},
		{ID: 2, Time: now, Due: t0.Add(time.Hour), Protocol: core.ServiceBus, Entity: "queue.1", Item: 2, Rule: "SB-8",
			Action: core.ActionExpired, Reason: "TTL ran out (entity default TTL 1h), applied 13d23h after it was due"},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sbConfigEntities, sbEntityNames(t, a)); diff != "" {
		t.Errorf("Service Bus entities of GET /api/entities (-want +got):\n%s", diff)
	}
}

// rule: EM-3 (entities created through the admin API, and their messages,
// survive a restart). The admin client of the Go SDK creates a queue over
// plain HTTP; its runtime properties count what azservicebus sent; lapse
// restarted on the same data folder still has both.
func TestServiceBusAdminQueueSurvivesRestart_EM3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m := MustStart(t, "--servicebus-config", sbConfigJSON, "--clock", "frozen", "--data", dir)
	ad := MustSBAdmin(t, m)
	day := "P1D"
	if _, err := ad.CreateQueue(sbContext(t), "orders", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DefaultMessageTimeToLive: &day}}); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	c := MustSBClient(t, m)
	MustSBSend(t, c, "orders", &azservicebus.Message{Body: []byte("one")}, &azservicebus.Message{Body: []byte("two")})
	rt, err := ad.GetQueueRuntimeProperties(sbContext(t), "orders", nil)
	if err != nil {
		t.Fatalf("GetQueueRuntimeProperties: %v", err)
	}
	if rt == nil || rt.ActiveMessageCount != 2 {
		t.Fatalf("runtime properties of orders: %+v, want ActiveMessageCount 2", rt)
	}
	c.Close(context.Background())
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	m = MustStart(t, "--servicebus-config", sbConfigJSON, "--clock", "frozen", "--data", dir)
	ad = MustSBAdmin(t, m)
	q, err := ad.GetQueue(sbContext(t), "orders", nil)
	if err != nil || q == nil {
		t.Fatalf("GetQueue orders after the restart: %+v %v", q, err)
	}
	if q.DefaultMessageTimeToLive == nil || *q.DefaultMessageTimeToLive != day {
		t.Errorf("orders' DefaultMessageTimeToLive after the restart: %v, want P1D", q.DefaultMessageTimeToLive)
	}
	rt, err = ad.GetQueueRuntimeProperties(sbContext(t), "orders", nil)
	if err != nil || rt == nil || rt.ActiveMessageCount != 2 {
		t.Errorf("runtime properties of orders after the restart: %+v %v, want ActiveMessageCount 2", rt, err)
	}
	if got := sbPeek(t, MustSBClient(t, m), "orders", 0); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("orders after the restart: %q, want one and two", got)
	}
}

// POST /api/reset drops what the admin API created and brings back the
// entities of --servicebus-config, empty.
func TestServiceBusResetRestoresConfigJSON(t *testing.T) {
	m := MustStart(t, "--servicebus-config", sbConfigJSON, "--clock", "frozen")
	a := MustAPI(t, m)
	ad := MustSBAdmin(t, m)
	if _, err := ad.CreateQueue(sbContext(t), "scratch", nil); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	if got := sbEntityNames(t, a); !slices.Contains(got, "queue scratch") {
		t.Fatalf("Service Bus entities before the reset: %q, want the queue scratch among them", got)
	}
	MustSBSend(t, MustSBClient(t, m), "queue.1", &azservicebus.Message{Body: []byte("before the reset")})
	if rt, err := ad.GetQueueRuntimeProperties(sbContext(t), "queue.1", nil); err != nil || rt == nil || rt.ActiveMessageCount != 1 {
		t.Fatalf("runtime properties of queue.1 before the reset: %+v %v, want ActiveMessageCount 1", rt, err)
	}

	var got map[string]string
	if status := a.post("/api/reset", "", &got); status != 200 || got["status"] != "reset" {
		t.Fatalf("POST /api/reset: %d %v", status, got)
	}
	if diff := cmp.Diff(sbConfigEntities, sbEntityNames(t, a)); diff != "" {
		t.Errorf("Service Bus entities after the reset (-want +got):\n%s", diff)
	}
	if q, err := ad.GetQueue(sbContext(t), "scratch", nil); err != nil || q != nil {
		t.Errorf("GetQueue scratch after the reset: %+v %v, want not found", q, err)
	}
	q, err := ad.GetQueue(sbContext(t), "queue.1", nil)
	if err != nil || q == nil {
		t.Fatalf("GetQueue queue.1 after the reset: %+v %v", q, err)
	}
	rt, err := ad.GetQueueRuntimeProperties(sbContext(t), "queue.1", nil)
	if err != nil || rt == nil || rt.ActiveMessageCount != 0 {
		t.Errorf("runtime properties of queue.1 after the reset: %+v %v, want ActiveMessageCount 0", rt, err)
	}
}

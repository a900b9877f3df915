package servicebus_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/lapse-emulator/lapse/servicebus"
)

// httpOnly sends the admin client's https requests over plain HTTP, as the
// official emulator's Go sample does.
type httpOnly struct{ base *http.Transport }

func (t httpOnly) Do(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *r.URL
	u.Scheme = "http"
	r.URL = &u
	return t.base.RoundTrip(r)
}

// MustAdmin returns admin.Client on the fixture's administration API,
// signing with key.
func (f *fixture) MustAdmin(key string) *admin.Client {
	f.tb.Helper()
	return f.MustAdminAs(servicebus.DefaultKey.Name, key)
}

// MustAdminAs is MustAdmin signing with the key named keyName.
func (f *fixture) MustAdminAs(keyName, key string) *admin.Client {
	f.tb.Helper()
	return MustAdminAt(f.tb, f.admin.URL, keyName, key)
}

// MustAdminAt returns admin.Client on the administration API at url,
// signing with the key named keyName.
func MustAdminAt(tb testing.TB, url, keyName, key string) *admin.Client {
	tb.Helper()
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	cs := fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;",
		strings.TrimPrefix(url, "http://"), keyName, key)
	c, err := admin.NewClientFromConnectionString(cs, &admin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: httpOnly{base: tr}, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func httpStatus(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func TestAdminCreatesWhatTheSDKUses(t *testing.T) {
	f := MustServer(t)
	ac := f.MustAdmin("SAS_KEY_VALUE")
	if _, err := ac.CreateQueue(ctx(t), "orders", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DefaultMessageTimeToLive: to.Ptr("P1D"), DeadLetteringOnMessageExpiration: to.Ptr(true), MaxDeliveryCount: to.Ptr(int32(3))}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateTopic(ctx(t), "events", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateSubscription(ctx(t), "events", "big", &admin.CreateSubscriptionOptions{Properties: &admin.SubscriptionProperties{
		DefaultRule: &admin.RuleProperties{Name: "big", Filter: &admin.SQLFilter{Expression: "size > @min", Parameters: map[string]any{"@min": 10}}}}}); err != nil {
		t.Fatal(err)
	}
	c := f.sb()
	c.send("orders", msg("a", 0), msg("b", 0))
	c.send("events", &azservicebus.Message{Body: []byte("big"), ApplicationProperties: map[string]any{"size": 20}},
		&azservicebus.Message{Body: []byte("small"), ApplicationProperties: map[string]any{"size": 5}})
	rt, err := ac.GetQueueRuntimeProperties(ctx(t), "orders", nil)
	if err != nil || rt == nil || rt.ActiveMessageCount != 2 || rt.TotalMessageCount != 2 {
		t.Fatalf("runtime properties %+v, %v", rt, err)
	}
	q, err := ac.GetQueue(ctx(t), "orders", nil)
	if err != nil || q == nil || *q.DefaultMessageTimeToLive != "P1D" || *q.MaxDeliveryCount != 3 {
		t.Fatalf("GetQueue %+v, %v", q, err)
	}
	if got := bodies(t, c.receiver("events", "big", nil)); !slices.Equal(got, []string{"big"}) {
		t.Fatalf("the subscription's SQL rule took %v", got)
	}
	// rule: SB-8 through the properties the admin client set
	f.advance(24 * time.Hour)
	rt, err = ac.GetQueueRuntimeProperties(ctx(t), "orders", nil)
	if err != nil || rt.ActiveMessageCount != 0 || rt.DeadLetterMessageCount != 2 {
		t.Fatalf("after a day: %+v, %v", rt, err)
	}
	pager := ac.NewListQueuesPager(nil)
	var names []string
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range page.Queues {
			names = append(names, q.QueueName)
		}
	}
	if !slices.Equal(names, []string{"orders"}) {
		t.Fatalf("queues listed: %v", names)
	}
	if _, err := ac.DeleteQueue(ctx(t), "orders", nil); err != nil {
		t.Fatal(err)
	}
	if q, err := ac.GetQueue(ctx(t), "orders", nil); err != nil || q != nil {
		t.Fatalf("GetQueue after delete: %+v, %v; want nil, nil", q, err)
	}
}

func TestAdminRefusesBadPropertiesAsTheService(t *testing.T) {
	f := MustServer(t)
	ac := f.MustAdmin("SAS_KEY_VALUE")
	for name, p := range map[string]*admin.QueueProperties{
		"idle4m":     {AutoDeleteOnIdle: to.Ptr("PT4M")},
		"negttl":     {DefaultMessageTimeToLive: to.Ptr("-PT1M")},
		"forward":    {ForwardTo: to.Ptr("nowhere")},
		"forwarddlq": {ForwardDeadLetteredMessagesTo: to.Ptr("nowhere")},
	} {
		_, err := ac.CreateQueue(ctx(t), name, &admin.CreateQueueOptions{Properties: p})
		if httpStatus(err) != http.StatusBadRequest {
			t.Errorf("%s: %v, want 400", name, err)
		}
	}
	if _, err := ac.CreateQueue(ctx(t), "q", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateQueue(ctx(t), "q", nil); httpStatus(err) != http.StatusConflict {
		t.Errorf("creating an existing queue: %v, want 409", err)
	}
	bad := f.MustAdmin("another key")
	if _, err := bad.CreateQueue(ctx(t), "x", nil); httpStatus(err) != http.StatusUnauthorized {
		t.Errorf("a token signed with another key: %v, want 401", err)
	}
	if got := f.s.Entities(); !slices.Equal(got, []string{"q"}) {
		t.Fatalf("entities: %v", got)
	}
}

func TestSessionEntitiesAreListedButNotReceived(t *testing.T) {
	f := MustServer(t)
	ac := f.MustAdmin("SAS_KEY_VALUE")
	if _, err := ac.CreateQueue(ctx(t), "sessions", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{RequiresSession: to.Ptr(true)}}); err != nil {
		t.Fatal(err)
	}
	q, err := ac.GetQueue(ctx(t), "sessions", nil)
	if err != nil || q == nil || !*q.RequiresSession {
		t.Fatalf("GetQueue: %+v, %v", q, err)
	}
	c := f.sb()
	s, err := c.c.NewSender("sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx(t))
	if err := s.SendMessage(ctx(t), msg("no session", 0), nil); err == nil {
		t.Fatal("a message without a session id was accepted by a session-enabled queue")
	}
	if err := s.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("s"), SessionID: to.Ptr("s1")}, nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.c.NewReceiverForQueue("sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx(t))
	if _, err := r.ReceiveMessages(ctx(t), 1, nil); err == nil {
		t.Fatal("a plain receiver on a session-enabled queue received")
	}
}

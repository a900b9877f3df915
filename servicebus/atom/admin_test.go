package atom_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
	"github.com/lapse-emulator/lapse/servicebus/sas"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite golden files and the fuzz corpus recorded from the Go admin client")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// defaultKey is the official emulator's key.
var defaultKey = sas.Key{Name: sas.DefaultKeyName, Value: sas.DefaultKeyValue}

// clock is the fixed time of the backend and the handler.
var clock = time.Date(2025, 3, 4, 5, 6, 7, 123456700, time.UTC)

// httpOnly sends the admin client's https requests over plain HTTP, as the
// official emulator's Go sample does (v1.11.0 still builds https URLs).
type httpOnly struct{ base *http.Transport }

func (t httpOnly) Do(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *r.URL
	u.Scheme = "http"
	r.URL = &u
	return t.base.RoundTrip(r)
}

// fixture is a handler over a memBackend served on a random port, with
// the authorization the server would do: SAS tokens for the request URL.
type fixture struct {
	backend *memBackend
	server  *httptest.Server
	bodies  *recorder
}

// recorder keeps the PUT bodies the clients sent, for the fuzz corpus.
type recorder struct {
	mu     sync.Mutex
	bodies []recorded
}

type recorded struct {
	path string
	body []byte
}

func MustFixture(tb testing.TB) *fixture {
	tb.Helper()
	b := newMemBackend(clock)
	authorize := func(r *http.Request) error {
		return sas.Verify(r.Header.Get("Authorization"), []sas.Key{defaultKey}, "http://"+r.Host+r.URL.Path, clock)
	}
	h := atom.NewHandler(b, authorize, nil)
	h.Now = func() time.Time { return clock }
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			data, _ := io.ReadAll(r.Body)
			rec.mu.Lock()
			rec.bodies = append(rec.bodies, recorded{r.URL.Path, data})
			rec.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(data))
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return &fixture{backend: b, server: srv, bodies: rec}
}

// MustAdmin returns the Go SDK's admin client for the fixture, with key.
func MustAdmin(tb testing.TB, f *fixture, key sas.Key) *admin.Client {
	tb.Helper()
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	host := strings.TrimPrefix(f.server.URL, "http://")
	cs := fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;", host, key.Name, key.Value)
	c, err := admin.NewClientFromConnectionString(cs, &admin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: httpOnly{base: tr},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// statusOf returns the HTTP status of an admin client error, 0 if none.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func TestAdminClientQueues(t *testing.T) {
	f := MustFixture(t)
	c := MustAdmin(t, f, defaultKey)
	ctx := context.Background()

	props := admin.QueueProperties{
		LockDuration:                     to.Ptr("PT30S"),
		DefaultMessageTimeToLive:         to.Ptr("PT10M"),
		DeadLetteringOnMessageExpiration: to.Ptr(true),
		MaxDeliveryCount:                 to.Ptr[int32](5),
		AutoDeleteOnIdle:                 to.Ptr("PT1H"),
		ForwardDeadLetteredMessagesTo:    to.Ptr("dlq2"),
		UserMetadata:                     to.Ptr("some <metadata> & more"),
		RequiresSession:                  to.Ptr(true),
	}
	created, err := c.CreateQueue(ctx, "orders", &admin.CreateQueueOptions{Properties: &props})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	want := admin.QueueProperties{
		LockDuration:                        to.Ptr("PT30S"),
		MaxSizeInMegabytes:                  to.Ptr[int32](1024),
		RequiresDuplicateDetection:          to.Ptr(false),
		RequiresSession:                     to.Ptr(true),
		DefaultMessageTimeToLive:            to.Ptr("PT10M"),
		DeadLetteringOnMessageExpiration:    to.Ptr(true),
		DuplicateDetectionHistoryTimeWindow: to.Ptr("PT10M"),
		MaxDeliveryCount:                    to.Ptr[int32](5),
		EnableBatchedOperations:             to.Ptr(true),
		Status:                              to.Ptr(admin.EntityStatusActive),
		AutoDeleteOnIdle:                    to.Ptr("PT1H"),
		EnablePartitioning:                  to.Ptr(false),
		ForwardDeadLetteredMessagesTo:       to.Ptr("dlq2"),
		UserMetadata:                        to.Ptr("some <metadata> & more"),
		MaxMessageSizeInKilobytes:           to.Ptr[int64](256),
	}
	if diff := cmp.Diff(want, created.QueueProperties); diff != "" {
		t.Errorf("CreateQueue (-want +got):\n%s", diff)
	}

	t.Run("CreateExistingIs409", func(t *testing.T) {
		_, err := c.CreateQueue(ctx, "ORDERS", nil)
		if statusOf(err) != http.StatusConflict || !strings.Contains(err.Error(), "SubCode=40900") {
			t.Fatalf("CreateQueue again: %v", err)
		}
	})
	t.Run("Get", func(t *testing.T) {
		got, err := c.GetQueue(ctx, "orders", nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got.QueueProperties); diff != "" {
			t.Errorf("GetQueue (-want +got):\n%s", diff)
		}
	})
	t.Run("GetMissingIsNil", func(t *testing.T) {
		got, err := c.GetQueue(ctx, "nope", nil)
		if err != nil || got != nil {
			t.Fatalf("GetQueue(nope) = %v, %v; want nil, nil", got, err)
		}
		rt, err := c.GetQueueRuntimeProperties(ctx, "nope", nil)
		if err != nil || rt != nil {
			t.Fatalf("GetQueueRuntimeProperties(nope) = %v, %v; want nil, nil", rt, err)
		}
	})
	t.Run("Update", func(t *testing.T) {
		p := want
		p.MaxDeliveryCount = to.Ptr[int32](7)
		p.Status = to.Ptr(admin.EntityStatusSendDisabled)
		p.ForwardDeadLetteredMessagesTo = nil
		got, err := c.UpdateQueue(ctx, "orders", p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, got.QueueProperties); diff != "" {
			t.Errorf("UpdateQueue (-want +got):\n%s", diff)
		}
		if _, err := c.UpdateQueue(ctx, "nope", p, nil); statusOf(err) != http.StatusNotFound {
			t.Errorf("UpdateQueue(nope): %v, want 404", err)
		}
	})
	t.Run("InvalidPropertyIs400", func(t *testing.T) {
		_, err := c.CreateQueue(ctx, "bad", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{DefaultMessageTimeToLive: to.Ptr("PT0S")}})
		if statusOf(err) != http.StatusBadRequest ||
			!strings.Contains(err.Error(), "SubCode=40000. The property value for 'DefaultMessageTimeToLive' must be between") {
			t.Fatalf("CreateQueue(bad): %v", err)
		}
		_, err = c.CreateQueue(ctx, "bad", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{LockDuration: to.Ptr("soon")}})
		if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "LockDuration") {
			t.Fatalf("CreateQueue(bad duration): %v", err)
		}
	})
	t.Run("RuntimeProperties", func(t *testing.T) {
		f.backend.setRuntime(atom.Path{Kind: atom.KindQueue, Entity: "orders"}, func(r *atom.Runtime) {
			r.ActiveMessageCount, r.DeadLetterMessageCount, r.ScheduledMessageCount = 3, 2, 1
			r.TransferMessageCount, r.TransferDeadLetterMessageCount, r.SizeInBytes = 4, 5, 542
		})
		got, err := c.GetQueueRuntimeProperties(ctx, "orders", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := admin.QueueRuntimeProperties{
			SizeInBytes: 542, CreatedAt: clock, UpdatedAt: clock, TotalMessageCount: 15,
			ActiveMessageCount: 3, DeadLetterMessageCount: 2, ScheduledMessageCount: 1,
			TransferMessageCount: 4, TransferDeadLetterMessageCount: 5,
		}
		if diff := cmp.Diff(want, got.QueueRuntimeProperties); diff != "" {
			t.Errorf("GetQueueRuntimeProperties (-want +got):\n%s", diff)
		}
	})
	t.Run("ListPaged", func(t *testing.T) {
		for _, n := range []string{"a.queue", "b-queue", "c_queue", "d/e"} {
			if _, err := c.CreateQueue(ctx, n, nil); err != nil {
				t.Fatalf("CreateQueue(%s): %v", n, err)
			}
		}
		for _, size := range []int32{0, 2} {
			var names []string
			pager := c.NewListQueuesPager(&admin.ListQueuesOptions{MaxPageSize: size})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range page.Queues {
					names = append(names, q.QueueName)
				}
			}
			if diff := cmp.Diff([]string{"a.queue", "b-queue", "c_queue", "d/e", "orders"}, names); diff != "" {
				t.Errorf("page size %d (-want +got):\n%s", size, diff)
			}
		}
		pager := c.NewListQueuesRuntimePropertiesPager(nil)
		page, err := pager.NextPage(ctx)
		if err != nil || len(page.QueueRuntimeProperties) != 5 {
			t.Fatalf("runtime pager: %v, %v", page, err)
		}
		got, err := c.GetQueue(ctx, "d/e", nil)
		if err != nil || got == nil || got.QueueName != "d/e" {
			t.Fatalf("GetQueue(d/e) = %v, %v", got, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		if _, err := c.DeleteQueue(ctx, "orders", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.DeleteQueue(ctx, "orders", nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("DeleteQueue again: %v, want 404", err)
		}
	})
	f.recordCorpus(t)
}

func TestAdminClientTopicsSubscriptionsRules(t *testing.T) {
	f := MustFixture(t)
	c := MustAdmin(t, f, defaultKey)
	ctx := context.Background()

	topic, err := c.CreateTopic(ctx, "events", &admin.CreateTopicOptions{Properties: &admin.TopicProperties{
		DefaultMessageTimeToLive: to.Ptr("P1D"), RequiresDuplicateDetection: to.Ptr(true),
		DuplicateDetectionHistoryTimeWindow: to.Ptr("PT20S"), SupportOrdering: to.Ptr(false),
	}})
	if err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	wantTopic := admin.TopicProperties{
		MaxSizeInMegabytes: to.Ptr[int32](1024), RequiresDuplicateDetection: to.Ptr(true),
		DefaultMessageTimeToLive: to.Ptr("P1D"), DuplicateDetectionHistoryTimeWindow: to.Ptr("PT20S"),
		EnableBatchedOperations: to.Ptr(true), Status: to.Ptr(admin.EntityStatusActive),
		AutoDeleteOnIdle: to.Ptr("P10675199DT2H48M5.4775807S"), EnablePartitioning: to.Ptr(false),
		SupportOrdering: to.Ptr(false), MaxMessageSizeInKilobytes: to.Ptr[int64](256),
	}
	if diff := cmp.Diff(wantTopic, topic.TopicProperties); diff != "" {
		t.Errorf("CreateTopic (-want +got):\n%s", diff)
	}
	got, err := c.GetTopic(ctx, "events", nil)
	if err != nil || got == nil {
		t.Fatalf("GetTopic: %v, %v", got, err)
	}
	if diff := cmp.Diff(wantTopic, got.TopicProperties); diff != "" {
		t.Errorf("GetTopic (-want +got):\n%s", diff)
	}
	if q, err := c.GetQueue(ctx, "events", nil); err != nil || q == nil || q.QueueName != "events" || q.LockDuration != nil {
		t.Errorf("GetQueue of a topic = %+v, %v; want the topic's entry, no queue properties", q, err)
	}

	// A subscription gets $Default, or the DefaultRule it is created with.
	if _, err := c.CreateSubscription(ctx, "events", "all", nil); err != nil {
		t.Fatalf("CreateSubscription(all): %v", err)
	}
	sub, err := c.CreateSubscription(ctx, "events", "red", &admin.CreateSubscriptionOptions{Properties: &admin.SubscriptionProperties{
		LockDuration: to.Ptr("PT2M"), RequiresSession: to.Ptr(true), MaxDeliveryCount: to.Ptr[int32](3),
		EnableDeadLetteringOnFilterEvaluationExceptions: to.Ptr(false), UserMetadata: to.Ptr("m"),
		DefaultRule: &admin.RuleProperties{Name: "onlyred", Filter: &admin.SQLFilter{Expression: "color = 'red'"}},
	}})
	if err != nil {
		t.Fatalf("CreateSubscription(red): %v", err)
	}
	wantSub := admin.SubscriptionProperties{
		LockDuration: to.Ptr("PT2M"), RequiresSession: to.Ptr(true), DefaultMessageTimeToLive: to.Ptr("P10675199DT2H48M5.4775807S"),
		DeadLetteringOnMessageExpiration: to.Ptr(false), EnableDeadLetteringOnFilterEvaluationExceptions: to.Ptr(false),
		MaxDeliveryCount: to.Ptr[int32](3), Status: to.Ptr(admin.EntityStatusActive), UserMetadata: to.Ptr("m"),
		EnableBatchedOperations: to.Ptr(true), AutoDeleteOnIdle: to.Ptr("P10675199DT2H48M5.4775807S"),
	}
	if diff := cmp.Diff(wantSub, sub.SubscriptionProperties); diff != "" {
		t.Errorf("CreateSubscription (-want +got):\n%s", diff)
	}
	if got, err := c.GetSubscription(ctx, "events", "red", nil); err != nil || got == nil {
		t.Fatalf("GetSubscription: %v, %v", got, err)
	} else if diff := cmp.Diff(wantSub, got.SubscriptionProperties); diff != "" {
		t.Errorf("GetSubscription (-want +got):\n%s", diff)
	}
	if got, err := c.GetSubscription(ctx, "events", "nope", nil); err != nil || got != nil {
		t.Errorf("GetSubscription(nope) = %v, %v; want nil, nil", got, err)
	}
	wantRules := map[string][]admin.RuleProperties{
		"all": {{Name: "$Default", Filter: &admin.TrueFilter{}}},
		"red": {{Name: "onlyred", Filter: &admin.SQLFilter{Expression: "color = 'red'"}}},
	}
	for sub, want := range wantRules {
		if diff := cmp.Diff(want, listRules(t, c, "events", sub)); diff != "" {
			t.Errorf("rules of %s (-want +got):\n%s", sub, diff)
		}
	}

	t.Run("Rules", func(t *testing.T) {
		sqlRule := admin.RuleProperties{
			Name: "sql",
			Filter: &admin.SQLFilter{Expression: "color = @c AND size > @n", Parameters: map[string]any{
				"@c": "blue", "@n": int64(3), "@ok": true, "@f": 1.5, "@t": clock,
			}},
			Action: &admin.SQLAction{Expression: "SET sys.Label = @l", Parameters: map[string]any{"@l": "seen"}},
		}
		corrRule := admin.RuleProperties{
			Name: "corr",
			Filter: &admin.CorrelationFilter{
				CorrelationID: to.Ptr("cid"), MessageID: to.Ptr("mid"), To: to.Ptr("to"), ReplyTo: to.Ptr("rt"),
				Subject: to.Ptr("subj"), SessionID: to.Ptr("sid"), ReplyToSessionID: to.Ptr("rsid"),
				ContentType: to.Ptr("application/json"), ApplicationProperties: map[string]any{"prop1": "value1", "n": int64(7)},
			},
			Action: &admin.SQLAction{Expression: "SET x = 1"},
		}
		falseRule := admin.RuleProperties{Name: "none", Filter: &admin.FalseFilter{}}
		for _, r := range []admin.RuleProperties{sqlRule, corrRule, falseRule} {
			got, err := c.CreateRule(ctx, "events", "all", &admin.CreateRuleOptions{Name: to.Ptr(r.Name), Filter: r.Filter, Action: r.Action})
			if err != nil {
				t.Fatalf("CreateRule(%s): %v", r.Name, err)
			}
			if diff := cmp.Diff(r, got.RuleProperties); diff != "" {
				t.Errorf("CreateRule(%s) (-want +got):\n%s", r.Name, diff)
			}
			back, err := c.GetRule(ctx, "events", "all", r.Name, nil)
			if err != nil || back == nil {
				t.Fatalf("GetRule(%s): %v, %v", r.Name, back, err)
			}
			if diff := cmp.Diff(r, back.RuleProperties); diff != "" {
				t.Errorf("GetRule(%s) (-want +got):\n%s", r.Name, diff)
			}
		}
		if _, err := c.CreateRule(ctx, "events", "all", &admin.CreateRuleOptions{Name: to.Ptr("sql")}); statusOf(err) != http.StatusConflict {
			t.Errorf("CreateRule(sql) again: %v, want 409", err)
		}
		updated := corrRule
		updated.Filter = &admin.SQLFilter{Expression: "1=1"}
		updated.Action = nil
		if got, err := c.UpdateRule(ctx, "events", "all", updated); err != nil {
			t.Fatalf("UpdateRule: %v", err)
		} else if diff := cmp.Diff(updated, got.RuleProperties); diff != "" {
			t.Errorf("UpdateRule (-want +got):\n%s", diff)
		}
		names := []string{}
		for _, r := range listRules(t, c, "events", "all") {
			names = append(names, r.Name)
		}
		if diff := cmp.Diff([]string{"$Default", "corr", "none", "sql"}, names); diff != "" {
			t.Errorf("ListRules (-want +got):\n%s", diff)
		}
		if _, err := c.DeleteRule(ctx, "events", "all", "$Default", nil); err != nil {
			t.Fatalf("DeleteRule: %v", err)
		}
		if got, err := c.GetRule(ctx, "events", "all", "$Default", nil); err != nil || got != nil {
			t.Errorf("GetRule($Default) after delete = %v, %v; want nil, nil", got, err)
		}
	})
	t.Run("RuntimeProperties", func(t *testing.T) {
		f.backend.setRuntime(atom.Path{Kind: atom.KindSubscription, Entity: "events", Subscription: "all"}, func(r *atom.Runtime) {
			r.ActiveMessageCount, r.DeadLetterMessageCount, r.AccessedAt = 9, 1, clock.Add(time.Second)
		})
		s, err := c.GetSubscriptionRuntimeProperties(ctx, "events", "all", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := admin.SubscriptionRuntimeProperties{
			TotalMessageCount: 10, ActiveMessageCount: 9, DeadLetterMessageCount: 1,
			CreatedAt: clock, UpdatedAt: clock, AccessedAt: clock.Add(time.Second),
		}
		if diff := cmp.Diff(want, s.SubscriptionRuntimeProperties); diff != "" {
			t.Errorf("GetSubscriptionRuntimeProperties (-want +got):\n%s", diff)
		}
		tr, err := c.GetTopicRuntimeProperties(ctx, "events", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr.SubscriptionCount != 2 || !tr.CreatedAt.Equal(clock) {
			t.Errorf("GetTopicRuntimeProperties = %+v", tr.TopicRuntimeProperties)
		}
	})
	t.Run("Lists", func(t *testing.T) {
		var subs []string
		for p := c.NewListSubscriptionsPager("events", &admin.ListSubscriptionsOptions{MaxPageSize: 1}); p.More(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range page.Subscriptions {
				subs = append(subs, s.SubscriptionName)
			}
		}
		if diff := cmp.Diff([]string{"all", "red"}, subs); diff != "" {
			t.Errorf("ListSubscriptions (-want +got):\n%s", diff)
		}
		page, err := c.NewListTopicsPager(nil).NextPage(ctx)
		if err != nil || len(page.Topics) != 1 || page.Topics[0].TopicName != "events" {
			t.Errorf("ListTopics = %+v, %v", page, err)
		}
	})
	t.Run("UpdateSubscriptionAndTopic", func(t *testing.T) {
		p := wantSub
		p.MaxDeliveryCount = to.Ptr[int32](4)
		got, err := c.UpdateSubscription(ctx, "events", "red", p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, got.SubscriptionProperties); diff != "" {
			t.Errorf("UpdateSubscription (-want +got):\n%s", diff)
		}
		tp := wantTopic
		tp.UserMetadata = to.Ptr("u")
		gotT, err := c.UpdateTopic(ctx, "events", tp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tp, gotT.TopicProperties); diff != "" {
			t.Errorf("UpdateTopic (-want +got):\n%s", diff)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		if _, err := c.DeleteSubscription(ctx, "events", "red", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.DeleteTopic(ctx, "events", nil); err != nil {
			t.Fatal(err)
		}
		if got, err := c.GetTopic(ctx, "events", nil); err != nil || got != nil {
			t.Errorf("GetTopic after delete = %v, %v", got, err)
		}
	})
	f.recordCorpus(t)
}

func listRules(t *testing.T, c *admin.Client, topic, sub string) []admin.RuleProperties {
	t.Helper()
	var out []admin.RuleProperties
	for p := c.NewListRulesPager(topic, sub, nil); p.More(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListRules(%s/%s): %v", topic, sub, err)
		}
		out = append(out, page.Rules...)
	}
	return out
}

func TestAdminClientNamespaceAndAuth(t *testing.T) {
	f := MustFixture(t)
	ctx := context.Background()
	ns, err := MustAdmin(t, f, defaultKey).GetNamespaceProperties(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := admin.NamespaceProperties{Name: "sbemulatorns", SKU: "Standard", CreatedTime: clock.Add(-time.Hour), ModifiedTime: clock}
	if diff := cmp.Diff(want, ns.NamespaceProperties); diff != "" {
		t.Errorf("GetNamespaceProperties (-want +got):\n%s", diff)
	}

	_, err = MustAdmin(t, f, sas.Key{Name: sas.DefaultKeyName, Value: "wrong"}).GetQueue(ctx, "q", nil)
	if statusOf(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "InvalidSignature") {
		t.Errorf("GetQueue with a wrong key: %v, want 401 InvalidSignature", err)
	}

	resp, err := http.Get(f.server.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"status":"healthy","message":"Service is healthy."}` {
		t.Errorf("GET /health = %d %s", resp.StatusCode, body)
	}
	http.DefaultClient.CloseIdleConnections()
}

// recordCorpus writes, with -update, the PUT bodies the Go admin client
// sent as seeds of FuzzDecodeEntry.
func (f *fixture) recordCorpus(t *testing.T) {
	if !*update {
		return
	}
	f.bodies.mu.Lock()
	defer f.bodies.mu.Unlock()
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeEntry")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, r := range f.bodies.bodies {
		name := fmt.Sprintf("%s-%02d-%s", t.Name(), i, strings.NewReplacer("/", "_", "$", "").Replace(strings.Trim(r.path, "/")))
		data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", r.body)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

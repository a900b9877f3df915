package atom_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// MustServe sends one request to h as the host localhost:5300 and returns
// the reply.
func MustServe(tb testing.TB, h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest(method, "http://localhost:5300"+target, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// trackingID hides the random part of error texts.
var trackingID = regexp.MustCompile(`TrackingId:[0-9a-f-]{36}`)

// checkGolden compares got with testdata/golden/name, rewriting it with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = trackingID.ReplaceAll(got, []byte("TrackingId:<uuid>"))
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// MustGoldenHandler is a handler over a backend holding one of each kind,
// with counts.
func MustGoldenHandler(tb testing.TB) (*atom.Handler, *memBackend) {
	tb.Helper()
	b := newMemBackend(clock)
	h := atom.NewHandler(b, nil, nil)
	h.Now = func() time.Time { return clock }
	q := atom.DefaultQueue()
	q.ForwardTo, q.UserMetadata = "other", "meta & data"
	topic := atom.DefaultTopic()
	sub := atom.DefaultSubscription()
	sub.DefaultRule = &atom.RuleProperties{
		Name: "corr",
		Filter: atom.Filter{Type: atom.CorrelationFilter, Correlation: atom.Correlation{
			CorrelationID: "id1", Subject: "label", Properties: map[string]any{"n": int32(7), "s": "v"},
		}},
		Action: &atom.Action{SQLExpression: "SET x = @p", Parameters: map[string]any{"@p": 1.5}},
	}
	for _, e := range []atom.Entry{
		{Path: atom.Path{Kind: atom.KindQueue, Entity: "queue.1"}, Queue: &q},
		{Path: atom.Path{Kind: atom.KindTopic, Entity: "topic.1"}, Topic: &topic},
		{Path: atom.Path{Kind: atom.KindSubscription, Entity: "topic.1", Subscription: "sub.1"}, Subscription: &sub},
		{Path: atom.Path{Kind: atom.KindRule, Entity: "topic.1", Subscription: "sub.1", Rule: "$Default"}, Rule: new(atom.DefaultRule())},
	} {
		if _, err := b.Put(e, false); err != nil {
			tb.Fatal(err)
		}
	}
	b.setRuntime(atom.Path{Kind: atom.KindQueue, Entity: "queue.1"}, func(r *atom.Runtime) {
		r.ActiveMessageCount, r.DeadLetterMessageCount, r.SizeInBytes, r.AccessedAt = 3, 1, 1234, clock.Add(time.Minute)
	})
	return h, b
}

func TestHandlerGolden(t *testing.T) {
	h, _ := MustGoldenHandler(t)
	tests := []struct {
		name, method, target, body string
		status                     int
		contentType                string
	}{
		{"namespaceinfo.xml", "GET", "/$namespaceinfo?api-version=2024-05", "", 200, "application/atom+xml;type=entry;charset=utf-8"},
		{"queue.xml", "GET", "/queue.1?api-version=2024-05", "", 200, "application/atom+xml;type=entry;charset=utf-8"},
		{"topic.xml", "GET", "/topic.1", "", 200, "application/atom+xml;type=entry;charset=utf-8"},
		{"subscription.xml", "GET", "/topic.1/Subscriptions/sub.1", "", 200, "application/atom+xml;type=entry;charset=utf-8"},
		{"rule.xml", "GET", "/topic.1/Subscriptions/sub.1/Rules/corr", "", 200, "application/atom+xml;type=entry;charset=utf-8"},
		{"queues-feed.xml", "GET", "/$Resources/Queues?api-version=2024-05&$top=10", "", 200, "application/atom+xml;type=feed;charset=utf-8"},
		{"rules-feed.xml", "GET", "/topic.1/Subscriptions/sub.1/Rules/", "", 200, "application/atom+xml;type=feed;charset=utf-8"},
		{"not-found.xml", "GET", "/nope", "", 404, "application/xml; charset=utf-8"},
		{"bad-request.xml", "PUT", "/q2", `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><DefaultMessageTimeToLive>PT0S</DefaultMessageTimeToLive></QueueDescription></content></entry>`, 400, "application/xml; charset=utf-8"},
		{"conflict.xml", "PUT", "/queue.1", `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"/></content></entry>`, 409, "application/xml; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := MustServe(t, h, tt.method, tt.target, tt.body)
			if w.Code != tt.status || w.Header().Get("Content-Type") != tt.contentType {
				t.Errorf("%s %s = %d %q, want %d %q\n%s", tt.method, tt.target, w.Code, w.Header().Get("Content-Type"), tt.status, tt.contentType, w.Body)
			}
			checkGolden(t, tt.name, w.Body.Bytes())
		})
	}
}

func TestHandlerRoutes(t *testing.T) {
	h, _ := MustGoldenHandler(t)
	const queueBody = `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"/></content></entry>`
	const subBody = `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><SubscriptionDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"/></content></entry>`
	tests := []struct {
		name, method, target, body string
		header                     []string
		status                     int
		contains                   string
	}{
		{"Health", "GET", "/health", "", nil, 200, `"healthy"`},
		{"LowercaseSubscriptions", "GET", "/topic.1/subscriptions/sub.1", "", nil, 200, "<title type=\"text\">sub.1</title>"},
		{"SubscriptionFeedWithStrayQuery", "GET", "/topic.1/Subscriptions?%3F=&%24top=5&api-version=2024-05", "", nil, 200, "<title type=\"text\">Subscriptions</title>"},
		{"FeedSkipPastEnd", "GET", "/$Resources/Topics?$skip=5", "", nil, 200, "<title type=\"text\">Topics</title><id>http://localhost:5300/$Resources/Topics</id><updated>2025-03-04T05:06:07Z</updated><link rel=\"self\" href=\"http://localhost:5300/$Resources/Topics\"/></feed>"},
		{"BadTop", "GET", "/$Resources/Queues?$top=x", "", nil, 400, "SubCode=40000. The value 'x' of the query parameter '$top'"},
		{"EntityIDHasItsPath", "GET", "/topic.1/Subscriptions/sub.1?api-version=2021-05", "", nil, 200, "<id>http://localhost:5300/topic.1/Subscriptions/sub.1?api-version=2021-05</id>"},
		{"CreateIs201", "PUT", "/new.queue", queueBody, nil, 201, "<title type=\"text\">new.queue</title>"},
		{"UpdateIs200", "PUT", "/queue.1", queueBody, []string{"If-Match", "*"}, 200, "<QueueDescription"},
		{"UpdateMissingIs404", "PUT", "/missing", queueBody, []string{"If-Match", "*"}, 404, "<Code>404</Code>"},
		{"SubscriptionBodyAtQueuePath", "PUT", "/q3", subBody, nil, 400, "A SubscriptionDescription cannot be put at 'q3'"},
		{"QueueBodyAtSubscriptionPath", "PUT", "/topic.1/Subscriptions/s2", queueBody, nil, 400, "A QueueDescription cannot be put at 'topic.1/Subscriptions/s2'"},
		{"XMLSyntax", "PUT", "/q3", "<entry><content><QueueDescription>", nil, 400, "SubCode=40000."},
		{"UnknownDescription", "PUT", "/q3", `<entry><content><NotificationHubDescription/></content></entry>`, nil, 400, "'NotificationHubDescription' is not supported"},
		{"DeleteTopicByName", "DELETE", "/topic.1", "", nil, 200, ""},
		{"DeleteMissing", "DELETE", "/topic.1", "", nil, 404, "<Code>404</Code>"},
		{"MethodNotAllowed", "POST", "/queue.1", "", nil, 405, "<Code>405</Code>"},
		{"UnknownDollarPath", "GET", "/$Resources/EventHubs", "", nil, 404, "<Code>404</Code>"},
		{"TooDeep", "GET", "/t/Subscriptions/s/Rules/r/x", "", nil, 404, "<Code>404</Code>"},
		{"Root", "GET", "/", "", nil, 404, "<Code>404</Code>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := MustServe(t, h, tt.method, tt.target, tt.body, tt.header...)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.contains) {
				t.Errorf("%s %s = %d\n%s\nwant %d containing %q", tt.method, tt.target, w.Code, w.Body, tt.status, tt.contains)
			}
		})
	}
}

// funcBackend is a Backend of function fields, for errors.
type funcBackend struct {
	atom.Backend
	get func(atom.Path) (atom.Entry, error)
}

func (f funcBackend) Get(p atom.Path) (atom.Entry, error) { return f.get(p) }

func TestHandlerErrors(t *testing.T) {
	b := funcBackend{Backend: newMemBackend(clock), get: func(atom.Path) (atom.Entry, error) {
		return atom.Entry{}, errors.New("disk on fire at /var/lib/secret")
	}}
	t.Run("InternalErrorsDoNotLeak", func(t *testing.T) {
		w := MustServe(t, atom.NewHandler(b, nil, nil), "GET", "/q", "")
		if w.Code != 500 || strings.Contains(w.Body.String(), "secret") {
			t.Errorf("GET = %d %s", w.Code, w.Body)
		}
	})
	t.Run("Unauthorized", func(t *testing.T) {
		deny := func(r *http.Request) error {
			return core.Errorf(core.EUNAUTHORIZED, "MalformedToken: The credentials contained in the authorization header are not in the WRAP format.")
		}
		h := atom.NewHandler(b, deny, nil)
		w := MustServe(t, h, "GET", "/q", "")
		if w.Code != 401 || !strings.HasPrefix(w.Body.String(), "<Error><Code>401</Code><Detail>MalformedToken: The credentials") {
			t.Errorf("GET = %d %s", w.Code, w.Body)
		}
		if w := MustServe(t, h, "GET", "/health", ""); w.Code != 200 {
			t.Errorf("GET /health = %d, want 200 without authorization", w.Code)
		}
	})
}

// issue 27: azure-servicebus for Python lists queues, topics,
// subscriptions and rules a page at a time (100 entities) and asks for the
// next page only by the feed's rel="next" link, whose $skip and $top it
// reads: without the link, a namespace of 105 queues listed 100. A full page
// with more after it links the next page, as the service's feed does; the
// last page links none.
func TestHandlerFeedLinksTheNextPage(t *testing.T) {
	h, b := MustGoldenHandler(t)
	for _, name := range []string{"queue.2", "queue.3"} {
		q := atom.DefaultQueue()
		if _, err := b.Put(atom.Entry{Path: atom.Path{Kind: atom.KindQueue, Entity: name}, Queue: &q}, false); err != nil {
			t.Fatal(err)
		}
	}
	const next = `<link rel="next" href="http://localhost:5300/$Resources/Queues?%24skip=2&amp;%24top=2&amp;api-version=2024-05"/>`
	first := MustServe(t, h, "GET", "/$Resources/Queues?$skip=0&$top=2&api-version=2024-05", "").Body.String()
	if !strings.Contains(first, next) || strings.Count(first, "<entry") != 2 {
		t.Errorf("first page of 2 of 3 queues: want 2 entries and %s\n%s", next, first)
	}
	last := MustServe(t, h, "GET", "/$Resources/Queues?%24skip=2&%24top=2&api-version=2024-05", "").Body.String()
	if strings.Contains(last, `rel="next"`) || strings.Count(last, "<entry") != 1 {
		t.Errorf("last page: want 1 entry and no next link\n%s", last)
	}
	if all := MustServe(t, h, "GET", "/$Resources/Queues", "").Body.String(); strings.Contains(all, `rel="next"`) {
		t.Errorf("all queues on one page: want no next link\n%s", all)
	}
}

package servicebus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// The official JS SDK, @azure/service-bus, against the server: each
// scenario of jstest/scenarios.mjs runs in node against a fresh server on a
// frozen clock and prints one JSON line, checked here.

// jsDir holds package.json, its lock file and scenarios.mjs.
const jsDir = "jstest"

// jsScenario is one scenario of scenarios.mjs and what its line must say.
type jsScenario struct {
	name string
	// want is what the line decodes to; the line is decoded into a value of
	// want's type, so fields that vary between runs are left out of it.
	want any
	// check, when set, looks at what want cannot pin down.
	check func(t *testing.T, line []byte)
}

func TestJSClient_Scenarios(t *testing.T) {
	node := clienttest.Node(t, jsDir, "@azure/service-bus")
	type peekLock struct {
		Body, MessageID, Color           string
		SequenceNumber                   int64
		DeliveryCount                    *int64
		HasLockToken                     bool
		LockedUntil, Enqueued            string
		AfterComplete, PeekAfterComplete int
	}
	type receiveAndDelete struct {
		Bodies     []string
		LockTokens int
		PeekAfter  int
	}
	type peek struct {
		Bodies          []string
		SequenceNumbers []int64
		States          []string
		DeliveryCounts  []*int64
		FromTwo         []string
		Past            int
		StillThere      int
	}
	type scheduled struct{ Body, State, Scheduled string }
	type schedule struct {
		SequenceNumbers []int64
		Before          []scheduled
		After           []string
		Received        int
	}
	type deferred struct {
		Body, State           string
		SequenceNumber        int64
		HasLockToken          bool
		ReceivedWhileDeferred int
		AfterComplete         string
		PeekAfterComplete     int
	}
	type expiryOf struct {
		PeekTimeToLive, TimeToLive       *int64
		ExpiresAfterEnqueuedMs           int64
		CreationTime, AbsoluteExpiryTime *string
	}
	type deliveryCounts struct{ Received, Peeked, ReceivedDeferred int64 }
	type expiryProperties struct {
		Day, Long       expiryOf
		Deferred        deliveryCounts
		DeferAtTheLimit string
	}
	type deadLetter struct {
		Body, DeadLetterReason, DeadLetterErrorDescription string
		MainQueue                                          int
	}
	type abandon struct {
		Body          string
		First, Second *int64
		SameSequence  bool
	}
	type ttlBefore struct {
		Body       string
		TimeToLive int64
	}
	type ttlExpiry struct {
		Before                 []ttlBefore
		DLQBefore              int
		Body, DeadLetterReason string
		MainAfter              int
	}
	type topic struct {
		Body, Subject string
		AfterComplete int
	}
	type ruleFilter struct {
		SQLExpression         string
		CorrelationID         string
		Subject               string
		ApplicationProperties map[string]any
	}
	type ruleAction struct {
		SQLExpression string
	}
	type rule struct {
		Name   string
		Filter ruleFilter
		Action ruleAction
	}
	type quantity struct {
		Body     string
		Quantity float64
	}
	type rules struct {
		Initial, Created, AfterDelete []rule
		Received                      []quantity
	}
	type batch struct {
		MaxSizeInBytes int64
		Count          int
		TookOversized  bool
		Bodies         []string
	}
	type sessionAccept struct {
		SessionID, LockedUntil string
		Bodies, SessionIDs     []string
		SecondAccept, State    string
		RenewedUntil           string
		StateAfterClose        string
		StateCleared           *string
	}
	type sessionNext struct {
		Next              string
		Bodies            []string
		None              string
		NoneWithinTimeout bool
	}
	type sessionSubscribe struct {
		Session       string
		Bodies, After []string
	}
	type sessionLockLost struct {
		First    int64
		Closed   bool
		Complete string
		Second   int64
		Body     string
	}
	type missingEntity struct {
		Send, Receive string
		After         []string
	}
	scenarios := []jsScenario{
		// issue 13.2: JS reports the header's delivery-count as it came,
		// so the server writes it even at 0 (DeliveryCount, DeliveryCounts,
		// First).
		{name: "peek-lock", want: peekLock{
			Body: "hello", MessageID: "m1", Color: "red", SequenceNumber: 1, DeliveryCount: ptr(int64(0)), HasLockToken: true,
			LockedUntil: "2026-11-22T10:01:00.000Z", Enqueued: "2026-11-22T10:00:00.000Z",
		}, check: func(t *testing.T, line []byte) {
			// receiveMessages asked for 10 and got 1: after a second it
			// drains, and waits for the drain's answer up to the 5 s limit.
			var got struct{ ElapsedMs int }
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			if got.ElapsedMs > 4000 {
				t.Errorf("receiveMessages took %d ms: the drain was not answered", got.ElapsedMs)
			}
		}},
		{name: "receive-and-delete", want: receiveAndDelete{Bodies: []string{"a", "b"}}},
		{name: "peek", want: peek{
			Bodies: []string{"p1", "p2", "p3"}, SequenceNumbers: []int64{1, 2, 3},
			States: []string{"active", "active", "active"}, DeliveryCounts: []*int64{ptr(int64(0)), ptr(int64(0)), ptr(int64(0))}, FromTwo: []string{"p2"}, StillThere: 3,
		}},
		{name: "schedule", want: schedule{
			SequenceNumbers: []int64{1, 2},
			Before: []scheduled{
				{Body: "later", State: "scheduled", Scheduled: "2100-01-01T00:00:00.000Z"},
				{Body: "much later", State: "scheduled", Scheduled: "2100-01-01T00:00:00.000Z"},
			},
			After: []string{"much later"},
		}},
		{name: "defer", want: deferred{Body: "deferred", State: "deferred", SequenceNumber: 1, HasLockToken: true, AfterComplete: "MessageNotFound"}},
		// issue 31.2 (TestIssue31_2_* say whose reports each follows):
		// no TTL on peek and no times added for the entity's default; a
		// TTL beyond 32 bits of milliseconds as the largest; a defer
		// counts the delivery and dead-letters at the limit.
		{name: "expiry-properties", want: expiryProperties{
			Day:             expiryOf{PeekTimeToLive: nil, TimeToLive: ptr[int64](86400000), ExpiresAfterEnqueuedMs: 86400000},
			Long:            expiryOf{PeekTimeToLive: nil, TimeToLive: ptr[int64](math.MaxUint32), ExpiresAfterEnqueuedMs: math.MaxUint32},
			Deferred:        deliveryCounts{Received: 0, Peeked: 1, ReceivedDeferred: 1},
			DeferAtTheLimit: "MaxDeliveryCountExceeded"}},
		{name: "dead-letter", want: deadLetter{Body: "poison", DeadLetterReason: "Broken", DeadLetterErrorDescription: "cannot parse"}},
		// JS reports the header's delivery-count as it is: 0 on the first
		// delivery.
		{name: "abandon", want: abandon{Body: "again", First: ptr(int64(0)), Second: ptr(int64(1)), SameSequence: true}},
		{name: "ttl-expiry", want: ttlExpiry{
			Before: []ttlBefore{{Body: "short-lived", TimeToLive: 60000}},
			Body:   "short-lived", DeadLetterReason: "TTLExpiredException",
		}},
		{name: "topic", want: topic{Body: "to all", Subject: "news"}},
		{name: "rules", want: rules{
			Initial: []rule{{Name: "$Default", Filter: ruleFilter{SQLExpression: "1=1"}}},
			Created: []rule{
				{Name: "$Default", Filter: ruleFilter{SQLExpression: "1=1"}},
				{Name: "corr", Filter: ruleFilter{CorrelationID: "c1", Subject: "s1", ApplicationProperties: map[string]any{"k": "v"}}},
				{Name: "red", Filter: ruleFilter{SQLExpression: "color = 'red'"}, Action: ruleAction{SQLExpression: "SET quantity = quantity * 2"}},
			},
			Received: []quantity{{Body: "red", Quantity: 4}},
		}},
		// rule: SS-1 (a named session, its messages in order, a second
		// accept refused, closing releases it), SS-2 (renew-session-lock
		// gives renewal + LockDuration), SS-4 (state, null clears it)
		{name: "session-accept", want: sessionAccept{
			SessionID: "a", LockedUntil: "2026-11-22T10:01:00.000Z", Bodies: []string{"a1", "a2"}, SessionIDs: []string{"a", "a"},
			SecondAccept: "SessionCannotBeLocked", State: "step 1", RenewedUntil: "2026-11-22T10:01:30.000Z", StateAfterClose: "step 1",
		}},
		// rule: SS-1 (accept next skips a held session; with none free the
		// service's timeout, within the client's)
		{name: "session-next", want: sessionNext{Next: "b", Bodies: []string{"b1"}, None: "ServiceTimeout", NoneWithinTimeout: true}},
		// rule: SS-1 (subscribe on a session: its messages in order)
		{name: "session-subscribe", want: sessionSubscribe{Session: "s", Bodies: []string{"s1", "s2", "s3"}}},
		// rule: SS-3 (the lock runs out on the server's clock: the receiver
		// is detached, settling fails with SessionLockLost, the next
		// receiver gets the message with its delivery counted)
		{name: "missing-entity", want: missingEntity{Send: "MessagingEntityNotFound", Receive: "MessagingEntityNotFound", After: []string{"still here"}}},
		{name: "session-lock-lost", want: sessionLockLost{First: 0, Closed: true, Complete: "SessionLockLost", Second: 1, Body: "l1"}},
		{name: "batch", want: batch{
			MaxSizeInBytes: servicebus.DefaultMaxMessageSize, Count: 5,
			Bodies: []string{"b0", "b1", "b2", "b3", "b4", "array1", "array2"},
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			line := runJSScenario(t, node, sc.name)
			got := newOf(sc.want)
			if err := json.Unmarshal(line, got); err != nil {
				t.Fatalf("decoding %s: %v", line, err)
			}
			if diff := cmp.Diff(sc.want, derefAny(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scenario %s (-want +got):\n%s\nline: %s", sc.name, diff, line)
			}
			if sc.check != nil {
				sc.check(t, line)
			}
		})
	}
}

// runJSScenario runs one scenario against a fresh server and returns the
// JSON line it printed. The control server's POST /advance?by=D moves the
// server's clock on the test's goroutine (f.advance), while node waits.
func runJSScenario(t *testing.T, node, name string) []byte {
	t.Helper()
	var log clienttest.Buffer
	f := mustJSServer(t, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	f.MustQueue("q", func(p *atom.QueueProperties) { p.LockDuration = time.Minute })
	f.MustQueue("dlx", func(p *atom.QueueProperties) { p.DeadLetteringOnMessageExpiration = true })
	f.MustTopic("t", nil, "s")
	f.sessionQueue("sq", nil)
	f.MustQueue("day", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = 24 * time.Hour })
	f.MustQueue("long", func(p *atom.QueueProperties) { p.DefaultMessageTimeToLive = 60 * 24 * time.Hour })
	f.MustQueue("once", func(p *atom.QueueProperties) { p.MaxDeliveryCount = 1 })

	type advance struct {
		by   time.Duration
		done chan struct{}
	}
	advances := make(chan advance)
	control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		by, err := time.ParseDuration(r.URL.Query().Get("by"))
		if r.Method != http.MethodPost || r.URL.Path != "/advance" || err != nil || by <= 0 {
			http.Error(w, "POST /advance?by=DURATION", http.StatusBadRequest)
			return
		}
		a := advance{by: by, done: make(chan struct{})}
		select {
		case advances <- a:
			<-a.done
		case <-r.Context().Done():
			return
		}
	}))
	defer control.Close()

	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(c, node, "scenarios.mjs", name)
	cmd.Dir = jsDir
	cmd.Env = append(os.Environ(), "SERVICEBUS_CONNECTION_STRING="+f.connStr, "LAPSE_CONTROL_URL="+control.URL)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
wait:
	for {
		select {
		case a := <-advances:
			f.advance(a.by)
			close(a.done)
		case err = <-exited:
			break wait
		}
	}
	if err != nil || c.Err() != nil {
		t.Logf("server log:\n%s", log.String())
		t.Fatalf("node scenarios.mjs %s: %v (%v)\nstdout: %s\nstderr: %s", name, err, c.Err(), stdout.Bytes(), stderr.Bytes())
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var head struct{ Scenario string }
	if len(lines) != 1 || json.Unmarshal(lines[0], &head) != nil || head.Scenario != name {
		t.Fatalf("node scenarios.mjs %s printed %q, want one JSON line for the scenario", name, stdout.Bytes())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	return lines[0]
}

// mustJSServer is MustServer with the server's log going to logger.
func mustJSServer(tb testing.TB, logger *slog.Logger) *fixture {
	tb.Helper()
	return MustServerWith(tb, func(c *servicebus.Config) { c.Logger = logger })
}

// newOf returns a pointer to a new zero value of v's type, for decoding.
func newOf(v any) any { return reflect.New(reflect.TypeOf(v)).Interface() }

// derefAny returns the value p points to.
func derefAny(p any) any { return reflect.ValueOf(p).Elem().Interface() }

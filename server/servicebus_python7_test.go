package server

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// The current azure-servicebus 7.x for Python (requirements.txt), on its
// own pure-Python AMQP stack, against lapse (issue 27). Each scenario of
// testdata/python7/scenarios.py runs four times, each against a fresh lapse
// on a frozen clock: with the sync and the asyncio clients, and with the
// emulator's connection string (UseDevelopmentEmulator=true: plain AMQP on
// lapse's AMQP port, the administration client's https:// requests to the
// same port) and with the service's over AMQPS on 5671 (the SDK keeps no
// port then), lapse's certificate trusted with connection_verify.

// python7Dir holds the scenarios of the current Python SDK.
const python7Dir = "testdata/python7"

// runSBPython7 runs scenario in the four ways and checks each line, decoded
// strictly into a value of want's type, against want.
func runSBPython7[T any](t *testing.T, scenario string, want T) {
	t.Helper()
	python := clienttest.PythonSDK(t, "import azure.servicebus as s; v = tuple(map(int, s.__version__.split('.')[:2])); assert (7, 12) <= v < (8, 0)")
	for _, conn := range []string{"emulator", "amqps"} {
		for _, api := range []string{"sync", "asyncio"} {
			t.Run(conn+"/"+api, func(t *testing.T) {
				m, ip := MustStartOnLoopback(t, "--clock", "frozen")
				cs := sbKeyConnString(ip + ":5671")
				if conn == "emulator" {
					cs = sbKeyConnString(listenerAddr(t, m, "amqp")) + "UseDevelopmentEmulator=true;"
				}
				env := []string{
					"SERVICEBUS_CONNECTION_STRING=" + cs,
					"LAPSE_CERT=" + MustCertFile(t, m),
					"LAPSE_CONTROL_URL=" + controlURL(m),
				}
				name := scenario
				if api == "asyncio" {
					name = "aio_" + scenario
				}
				line := runPythonIn(t, python7Dir, python, "scenarios.py", env, name)
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(line, &fields); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if got := string(fields["scenario"]); got != `"`+name+`"` {
					t.Fatalf("line of scenario %s, want %s: %s", got, name, line)
				}
				delete(fields, "scenario")
				rest, _ := json.Marshal(fields)
				dec := json.NewDecoder(bytes.NewReader(rest))
				dec.DisallowUnknownFields()
				var got T
				if err := dec.Decode(&got); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("scenario %s (-want +got):\n%s\nline: %s", name, diff, line)
				}
			})
		}
	}
}

// Send, then settle in all four ways: complete, abandon (received again
// with its delivery counted), defer (received by sequence number, still
// deferred) and dead-letter (reason and description in the dead-letter
// queue); a missing entity is the SDK's not-found error, a message over
// the link's size limit its size error.
func TestPython7ServiceBusSettle(t *testing.T) {
	type result struct {
		Bodies          []string
		MessageID       string `json:"messageId"`
		Color           string
		SequenceNumbers []int64
		DeliveryCounts  []int
		Again           [][]any
		Deferred        [][]string
		DeadLettered    [][]string
		Left            []int
		Missing         string
		// issue 27: the rejected outcome's error has its three fields.
		TooBig string
	}
	runSBPython7(t, "settle", result{
		Bodies: []string{"again", "bad", "done", "later"}, MessageID: "m-1", Color: "red",
		SequenceNumbers: []int64{1, 2, 3, 4}, DeliveryCounts: []int{0, 0, 0, 0},
		Again:        [][]any{{"again", 1.0}},
		Deferred:     [][]string{{"later", "ServiceBusMessageState.DEFERRED"}},
		DeadLettered: [][]string{{"bad", "not today", "bad body"}},
		Left:         []int{0, 0, 0}, Missing: "MessagingEntityNotFoundError", TooBig: "MessageSizeExceededError",
	})
}

// rule: SB-4 (a scheduled message is enqueued at its time; cancel removes
// it). Peek shows the scheduled message with its state, from a sequence
// number too, without locks.
func TestPython7ServiceBusPeekSchedule_SB4(t *testing.T) {
	type result struct {
		Scheduled  int
		Peeked     [][]string
		FromSecond []string
		NoLocks    bool
		BeforeTime []string
		Due        []string
		Left       []int
	}
	runSBPython7(t, "peek_schedule", result{
		Scheduled: 2,
		Peeked: [][]string{
			{"a", "ServiceBusMessageState.ACTIVE"}, {"b", "ServiceBusMessageState.ACTIVE"},
			{"c", "ServiceBusMessageState.ACTIVE"}, {"keep", "ServiceBusMessageState.SCHEDULED"},
		},
		FromSecond: []string{"b", "c", "keep"}, NoLocks: true, BeforeTime: []string{}, Due: []string{"keep"},
		Left: []int{0, 0, 0},
	})
}

// rule: SB-7 (a renewed lock holds past the first lock's end): 12 s on
// lapse's clock past 10 s locks, renew_message_lock's and AutoLockRenewer's
// messages complete, and the unrenewed one's lock is lost (it is active
// again).
func TestPython7ServiceBusRenewLock_SB7(t *testing.T) {
	type result struct {
		RenewedBy, AutoRenewedBy int
		Lost                     string
		Left                     []int
	}
	runSBPython7(t, "renew_lock", result{RenewedBy: 6, AutoRenewedBy: 12, Lost: "MessageLockLostError", Left: []int{1, 0, 0}})
}

// rule: SB-2 (the entity default applies to a message without a TTL, and
// caps a longer one), SB-8 (expired messages go to the dead-letter queue
// with TTLExpiredException), on lapse's moved clock.
func TestPython7ServiceBusTTLDeadLetter_SB2_SB8(t *testing.T) {
	type result struct {
		After90s, After150s []int
		DeadLettered        [][]string
	}
	runSBPython7(t, "ttl_dead_letter", result{
		After90s: []int{2, 1}, After150s: []int{0, 3},
		DeadLettered: [][]string{
			{"by default", "TTLExpiredException"}, {"long", "TTLExpiredException"}, {"own ttl", "TTLExpiredException"},
		},
	})
}

// issue 31.2 with azure-servicebus, as TestIssue31_2_* (package
// servicebus) with azservicebus and the JavaScript scenario
// expiry-properties: the entity's default TTL adds no creation-time or
// absolute-expiry-time and shows on receive, not on peek (SB-11); one
// beyond 32 bits of milliseconds comes as the largest; a defer counts the
// delivery (Python shows the header's count) and the one that reaches
// MaxDeliveryCount dead-letters the message (SB-9).
func TestPython7ServiceBusExpiryProperties_Issue31_2(t *testing.T) {
	type expiry struct {
		PeekTimeToLive, TimeToLive *int64
		ExpiresAfterEnqueuedMs     int64
		TimesAdded                 []*string
	}
	type result struct {
		Day, Long       expiry
		Deferred        []int
		DeferAtTheLimit string
	}
	day, long := int64(86400000), int64(math.MaxUint32)
	runSBPython7(t, "expiry_properties", result{
		Day:             expiry{TimeToLive: &day, ExpiresAfterEnqueuedMs: day, TimesAdded: []*string{nil, nil}},
		Long:            expiry{TimeToLive: &long, ExpiresAfterEnqueuedMs: long, TimesAdded: []*string{nil, nil}},
		Deferred:        []int{0, 1, 1},
		DeferAtTheLimit: "MaxDeliveryCountExceeded",
	})
}

// rules SS-1 (a named session's messages in order, a held session refused,
// the next available session), SS-2 (renew-session-lock gives the moved
// clock + LockDuration), SS-3 (the session lock runs out on lapse's clock:
// the receiver's settlement fails with SessionLockLostError and the next
// receiver gets the message with its delivery counted), SS-4 (state kept,
// None clears it).
func TestPython7ServiceBusSessions_SS1_SS2_SS3_SS4(t *testing.T) {
	type result struct {
		RequiresSession bool
		Session         string
		Bodies          []string
		SecondAccept    string
		State           string
		RenewedBy       int
		Next            string
		NextBodies      [][]any
		LockLost        string
		Again           [][]any
		StateOfA        string
		Cleared         *string
	}
	runSBPython7(t, "sessions", result{
		RequiresSession: true, Session: "a", Bodies: []string{"a1", "a2"}, SecondAccept: "SessionCannotBeLockedError",
		State: "step 1", RenewedBy: 20, Next: "b", NextBodies: [][]any{{"b1", 0.0}}, LockLost: "SessionLockLostError",
		Again: [][]any{{"b1", 1.0}}, StateOfA: "step 1",
	})
}

// The administration client: a queue created, read, updated; topics,
// subscriptions and rules created and listed; runtime properties of
// queues, topics and subscriptions; deletes; a missing queue is
// ResourceNotFoundError.
func TestPython7ServiceBusAdministration(t *testing.T) {
	type result struct {
		Queue         []any
		Queues        []string
		Topics        []string
		Subscriptions []string
		// issue 27: the SDK pages by the feed's next link.
		SubscriptionsByOne []string
		Rules              [][]string
		Runtime            map[string]int
		QueuesRuntime      [][]any
		Red                []string
		AfterDelete        []int
		GetMissing         string
	}
	runSBPython7(t, "administration", result{
		Queue: []any{"q", "0:00:45", 3.0, "1:00:00"}, Queues: []string{"q"}, Topics: []string{"t"},
		Subscriptions: []string{"all", "red"}, SubscriptionsByOne: []string{"all", "red"}, Rules: [][]string{{"red", "color = 'red'"}},
		Runtime:       map[string]int{"all": 3, "red": 1, "q": 1, "topicSubscriptions": 2},
		QueuesRuntime: [][]any{{"q", 1.0}}, Red: []string{"red one"}, AfterDelete: []int{0, 0},
		GetMissing: "ResourceNotFoundError",
	})
}

// issue 29's routing with the Python SDK (it was tried with Go clients
// only): ttl_dead_letter, which moves the clock, runs in a sandbox through
// the connection string and control URL the sandbox hands out, on the same
// ports as the default world, whose clock does not move and which gets
// none of the queues.
func TestPython7ServiceBusInASandbox(t *testing.T) {
	python := clienttest.PythonSDK(t, "import azure.servicebus as s; v = tuple(map(int, s.__version__.split('.')[:2])); assert (7, 12) <= v < (8, 0)")
	m := MustStart(t, "--clock", "frozen")
	sb := mustSandbox(t, m, `{}`)
	var before, after struct{ Now, Mode string }
	MustAPI(t, m).get("/api/clock", &before)
	env := []string{
		"SERVICEBUS_CONNECTION_STRING=" + sb.ServiceBus.ConnectionString,
		"LAPSE_CERT=" + MustCertFile(t, m),
		"LAPSE_CONTROL_URL=" + controlURL(m) + "/api/sandboxes/" + sb.ID,
	}
	line := runPythonIn(t, python7Dir, python, "scenarios.py", env, "ttl_dead_letter")
	var got struct {
		Scenario            string
		After90s, After150s []int
		DeadLettered        [][]string
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if want := []int{0, 3}; !cmp.Equal(got.After150s, want) || len(got.DeadLettered) != 3 {
		t.Fatalf("in the sandbox: %s", line)
	}
	MustAPI(t, m).get("/api/clock", &after)
	if before.Now != after.Now {
		t.Errorf("the default world's clock moved from %s to %s", before.Now, after.Now)
	}
	var entities []map[string]any
	MustAPI(t, m).get("/api/entities?protocol=servicebus", &entities)
	if len(entities) != 0 {
		t.Errorf("the default world has %d Service Bus entities, want none", len(entities))
	}
}

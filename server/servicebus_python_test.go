package server

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// Debian's azure-servicebus 7.8.2 (on uamqp, no emulator support) against
// lapse as its users would run it: AMQPS on 5671 with lapse's certificate
// trusted, the administration client over HTTPS, lapse's clock moved
// through the control API. Each scenario of testdata/python/servicebus.py
// runs against a fresh lapse on a frozen clock.

// runSBPython runs one scenario and decodes its line into a value of
// want's type, compared with want.
func runSBPython[T any](t *testing.T, scenario string, want T) {
	t.Helper()
	python := clienttest.Python(t, "azure.servicebus", "uamqp")
	m, ip := MustStartOnLoopback(t, "--clock", "frozen")
	cert := MustCertFile(t, m)
	env := []string{
		// The AMQP client dials 5671 whatever the endpoint says; the
		// administration client uses the endpoint's port, 5671 too.
		"SERVICEBUS_CONNECTION_STRING=" + sbKeyConnString(ip+":5671"),
		"LAPSE_CERT=" + cert,
		"REQUESTS_CA_BUNDLE=" + cert,
		"LAPSE_CONTROL_URL=" + controlURL(m),
	}
	line := runPython(t, python, "servicebus.py", env, scenario)
	var got T
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scenario %s (-want +got):\n%s\nline: %s", scenario, diff, line)
	}
}

func TestPythonServiceBusSendReceiveSettle(t *testing.T) {
	type result struct {
		Bodies           []string
		MessageID        string `json:"messageId"`
		Color            string
		OtherIdsAreGUIDs bool `json:"otherIdsAreGUIDs"`
		DeliveryCounts   []int
		Locked           bool
		SequenceNumbers  []int64
		Redelivered      []string
		RedeliveryCount  int
		DeadLettered     [][]string
		Left             []int
		MissingSend      string
		MissingReceive   string
		Scenario         string
	}
	runSBPython(t, "send_receive_settle", result{
		Bodies: []string{"one", "three", "two"}, MessageID: "id-1", Color: "red", OtherIdsAreGUIDs: true,
		// issue 13.2: the header's delivery-count is there at 0.
		DeliveryCounts: []int{0, 0, 0}, Locked: true, SequenceNumbers: []int64{1, 2, 3},
		Redelivered: []string{"two"}, RedeliveryCount: 1,
		DeadLettered:   [][]string{{"three", "Rejected", "not today"}},
		Left:           []int{0, 0},
		MissingSend:    "ServiceBusCommunicationError: The messaging entity 'nope' could not be found. Error condition: ErrorCodes.NotFound.",
		MissingReceive: "ServiceBusCommunicationError", Scenario: "send_receive_settle",
	})
}

// issue 13.3: peek, receive-deferred, schedule, cancel and renew-lock are
// $management requests, whose replies uamqp refuses (and crashes on) when
// they come before the request's disposition.
func TestPythonServiceBusPeek(t *testing.T) {
	type result struct {
		Bodies          []string
		SequenceNumbers []int64
		FromSecond      []string
		IdsAreSet       bool
		NoLocks         bool
		Scenario        string
	}
	runSBPython(t, "peek", result{
		Bodies: []string{"a", "b", "c"}, SequenceNumbers: []int64{1, 2, 3}, FromSecond: []string{"b", "c"},
		IdsAreSet: true, NoLocks: true, Scenario: "peek",
	})
}

func TestPythonServiceBusDefer(t *testing.T) {
	type result struct {
		Body, PeekedState string
		AfterComplete     int
		Scenario          string
	}
	runSBPython(t, "defer", result{Body: "later", PeekedState: "ServiceBusMessageState.DEFERRED", AfterComplete: 0, Scenario: "defer"})
}

// rule: SB-4 (a scheduled message is enqueued at its time; cancel removes it)
func TestPythonServiceBusSchedule_SB4(t *testing.T) {
	type result struct {
		SequenceNumbers int
		Before          [][]string
		Received        []string
		Scenario        string
	}
	runSBPython(t, "schedule", result{
		SequenceNumbers: 2, Before: [][]string{{"keep", "ServiceBusMessageState.SCHEDULED"}},
		Received: []string{"keep"}, Scenario: "schedule",
	})
}

// rule: SB-7 (a renewed lock holds past the first lock's end)
func TestPythonServiceBusRenewLock_SB7(t *testing.T) {
	type result struct {
		RenewedBy, Left int
		Scenario        string
	}
	runSBPython(t, "renew_lock", result{RenewedBy: 20, Left: 0, Scenario: "renew_lock"})
}

// rule: SB-2 (the entity default applies to a message without a TTL),
// SB-8 (expired messages go to $DeadLetterQueue with TTLExpiredException)
func TestPythonServiceBusTTLDeadLetter_SB8(t *testing.T) {
	type result struct {
		AfterTwoMinutes []int
		DeadLettered    [][]string
		Descriptions    []string
		StillActive     int
		Scenario        string
	}
	runSBPython(t, "ttl_dead_letter", result{
		AfterTwoMinutes: []int{1, 1},
		DeadLettered:    [][]string{{"by default", "TTLExpiredException"}, {"own ttl", "TTLExpiredException"}},
		Descriptions:    []string{"The message expired and was dead lettered."},
		Scenario:        "ttl_dead_letter",
	})
}

// The administration client (HTTPS): queues, topics, subscriptions and
// rules created, read, updated, listed and deleted; a topic's message
// reaches its subscription.
func TestPythonServiceBusAdministration(t *testing.T) {
	type result struct {
		Queue         []any
		Queues        []string
		Topics        []string
		Subscriptions []string
		Rules         []string
		RuleFilter    string
		Received      []string
		AfterDelete   []int
		Scenario      string
	}
	runSBPython(t, "administration", result{
		Queue: []any{"q", "0:10:00", true}, Queues: []string{"q"}, Topics: []string{"t"}, Subscriptions: []string{"s"},
		Rules: []string{"$Default", "red"}, RuleFilter: "color = 'red'", Received: []string{"blue one", "red one"},
		AfterDelete: []int{0, 0}, Scenario: "administration",
	})
}

// issue 14.6 and rules SS-1 (a named session's messages in order, a held
// session refused, the next available session), SS-2 (renew-session-lock
// gives renewal + LockDuration), SS-3 (the lock runs out on lapse's clock:
// the next receiver gets the message with its delivery counted), SS-4
// (state kept, null clears it): Debian's azure-servicebus session receiver
// over AMQPS, the queue made by its administration client.
func TestPythonServiceBusSessions_SS1_SS2_SS3_SS4(t *testing.T) {
	type result struct {
		RequiresSession bool
		Active          int
		Session         string
		Peeked          []string
		Bodies          []string
		SessionIds      []string
		SecondAccept    string
		State           string
		RenewedBy       int
		Next            string
		NextBodies      []string
		FirstDelivery   int
		Again           []string
		SecondDelivery  int
		StateOfA        string
		Cleared         *string
		Left            []int
		Scenario        string
	}
	runSBPython(t, "sessions", result{
		RequiresSession: true, Active: 3, Session: "a", Peeked: []string{"a1", "a2"},
		Bodies: []string{"a1", "a2"}, SessionIds: []string{"a", "a"}, SecondAccept: "SessionCannotBeLockedError",
		State: "step 1", RenewedBy: 30, Next: "b", NextBodies: []string{"b1"}, FirstDelivery: 0,
		Again: []string{"b1"}, SecondDelivery: 1, StateOfA: "step 1", Left: []int{0, 0}, Scenario: "sessions",
	})
}

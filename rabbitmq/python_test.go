package rabbitmq_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// Debian's Python clients against the server: each scenario of
// testdata/python/{pika,kombu}_client.py runs against a fresh server (and
// its management API) on a frozen clock that the script moves through the
// control URL, and prints one JSON line, checked here.

// runPython runs script's scenario against the broker at amqpURL and
// returns its JSON line decoded into a value of want's type.
func runPython(t *testing.T, python, script, scenario string, env []string, want any) any {
	t.Helper()
	p := startProgram(t, filepath.Join("testdata", "python"), env, python, script, scenario)
	out := p.wait(90 * time.Second)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	got := newOf(want)
	var head struct{ Scenario string }
	last := []byte(lines[len(lines)-1])
	if json.Unmarshal(last, &head) != nil || head.Scenario != scenario {
		t.Fatalf("%s %s printed %q, want a JSON line for the scenario", script, scenario, out)
	}
	if err := json.Unmarshal(last, got); err != nil {
		t.Fatalf("%s %s: %v in %s", script, scenario, err, last)
	}
	return derefAny(got)
}

// pythonEnv starts a server, its management API and clock control for a
// script, and returns the script's environment.
func pythonEnv(t *testing.T) []string {
	t.Helper()
	f := MustServer(t)
	a := MustManagement(t, f)
	return []string{"LAPSE_AMQP_URL=" + f.url, "LAPSE_CONTROL_URL=" + MustClockControl(t, f),
		"LAPSE_MANAGEMENT_URL=http://guest:guest@" + strings.TrimPrefix(a.base, "http://")}
}

type pikaDeadLetter struct {
	Confirmed                bool
	Before, At59s, After     int
	Body, App, Reason, Queue string
	DeliveryMode             int
	Count                    int
	Fields                   []string
	FirstDeathReason         string
	DeadLeft                 int
}

type xDeathEntry struct {
	Queue  string
	Fields []string
}

// pikaDelayed is what pika_client.py's delayed-exchange scenario reports.
type pikaDelayed struct {
	Refused        closeReply
	Before, Almost int
	Body           string
	XDelay         int
}

// closeReply is a channel or connection close's code and text.
type closeReply struct {
	Code int
	Text string
}

type pikaDelivery struct {
	Body        string
	Redelivered bool
}

// issue 13 (Python clients): pika's first steps, with the expiry rules they
// meet.
func TestPythonPika(t *testing.T) {
	python := clienttest.Python(t, "pika")
	for _, c := range []struct {
		scenario string
		want     any
	}{
		// rule: RB-1, RB-9, RB-12 — a confirmed persistent message expires
		// after x-message-ttl on the moved clock (not a moment before) into
		// the dead-letter exchange, with x-death in RabbitMQ's field order.
		{"ttl-dead-letter", pikaDeadLetter{Confirmed: true, Before: 1, At59s: 1, After: 0, Body: "m1", App: "pika",
			DeliveryMode: 2, Reason: "expired", Queue: "pika.work", Count: 1,
			Fields:           []string{"count", "reason", "queue", "time", "exchange", "routing-keys"},
			FirstDeathReason: "expired"}},
		// rule: RB-12 — issue 13.8: after a second death, the new entry's
		// fields are sorted by name and the first keeps the order it was
		// written in; pika shows both orders.
		{"x-death-order", struct{ Entries []xDeathEntry }{[]xDeathEntry{
			{"pika.second", []string{"count", "exchange", "queue", "reason", "routing-keys", "time"}},
			{"pika.first", []string{"count", "reason", "queue", "time", "exchange", "routing-keys", "original-expiration"}},
		}}},
		// rule: RB-5 — the lower of the queue's TTL (10 s) and the message's
		// expiration (2 s, 60 s) applies.
		{"per-message-ttl", struct{ Before, At2s, At10s int }{2, 1, 0}},
		{"publish-consume-ack", struct {
			Received []pikaDelivery
			Left     int
		}{[]pikaDelivery{{"j1", false}, {"j1", true}, {"j2", false}, {"j3", false}}, 0}},
		// rule: RB-14 — issue 31.5's own example: priorities 3, 6, 3,
		// none, 10, 200 into x-max-priority 10 come back 10, 200, 6, 3, 3,
		// none, as RabbitMQ 3.10 gives them (difftest's
		// RB14GetOrderIssueExample).
		{"priorities", struct{ Order []string }{[]string{"e10", "f200", "b6", "a3", "c3", "dnone"}}},
		// rule: RB-15 — the delayed-message exchange: x-delayed-type is
		// required; a message is held until the moved clock passes its
		// x-delay, then delivered with x-delay negated.
		{"delayed-exchange", pikaDelayed{Refused: closeReply{406,
			"PRECONDITION_FAILED - Invalid argument, 'x-delayed-type' must be an existing exchange type"},
			Body: "later", XDelay: -5000}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			got := runPython(t, python, "pika_client.py", c.scenario, pythonEnv(t), c.want)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("pika %s (-want +got):\n%s", c.scenario, diff)
			}
		})
	}
}

// issue 13 (Python clients): kombu's first steps on its py-amqp transport.
func TestPythonKombu(t *testing.T) {
	python := clienttest.Python(t, "kombu", "amqp")
	for _, c := range []struct {
		scenario string
		want     any
	}{
		// rule: RB-1, RB-9 — published with confirms, expired on the moved
		// clock into the dead-letter queue.
		{"ttl-dead-letter", struct {
			Before                  int
			WorkEmpty               bool
			Payload                 map[string]int
			Reason, Queue, Exchange string
			RoutingKeys             []string
		}{1, true, map[string]int{"n": 1}, "expired", "kombu.work", "kombu.jobs", []string{"job"}}},
		{"publish-consume-ack", struct {
			Received []int
			Left     int
		}{[]int{0, 1, 2}, 0}},
		// rule: RB-14 — kombu's max_priority, as Celery's task queues
		// declare it: a consumer with prefetch 1 takes the highest priority
		// first, 200 counting as the maximum and 0 last.
		{"priorities", struct{ Order []int }{[]int{5, 6, 2, 1, 3, 4}}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			got := runPython(t, python, "kombu_client.py", c.scenario, pythonEnv(t), c.want)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("kombu %s (-want +got):\n%s", c.scenario, diff)
			}
		})
	}
}

// kombuRecovery is what kombu_client.py's recovery scenario reports.
type kombuRecovery struct {
	Before       int
	ListedBefore int
	DeleteStatus int
	Closed       *struct {
		Code int
		Text string
	}
	After         []int
	ListedAfter   int
	NewConnection bool
}

// issue 13.7: kombu recovers from a connection that a test found by its
// connection_name and dropped through the management API (320
// CONNECTION_FORCED with the X-Reason text), against lapse as against
// RabbitMQ (run against a real one when LAPSE_DIFF_RABBITMQ_URL and
// LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL are set, as in CI).
func TestPythonKombuRecoversFromManagementClose(t *testing.T) {
	python := clienttest.Python(t, "kombu", "amqp")
	want := kombuRecovery{Before: 1, ListedBefore: 1, DeleteStatus: 204, Closed: &struct {
		Code int
		Text string
	}{320, "CONNECTION_FORCED - kombu recovery test"}, After: []int{2}, ListedAfter: 1, NewConnection: true}
	targets := map[string][]string{"lapse": nil}
	if url, mgmt := os.Getenv("LAPSE_DIFF_RABBITMQ_URL"), os.Getenv("LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL"); url != "" && mgmt != "" {
		targets["rabbitmq"] = []string{"LAPSE_AMQP_URL=" + url, "LAPSE_MANAGEMENT_URL=" + mgmt}
	} else if os.Getenv("CI") != "" {
		t.Error("CI must run this against RabbitMQ too: LAPSE_DIFF_RABBITMQ_URL and _MANAGEMENT_URL are not set")
	}
	for name, env := range targets {
		t.Run(name, func(t *testing.T) {
			if env == nil {
				env = pythonEnv(t)
			}
			got := runPython(t, python, "kombu_client.py", "recovery", env, want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kombu recovery against %s (-want +got):\n%s", name, diff)
			}
		})
	}
}

// newOf returns a pointer to a new zero value of v's type, for decoding.
func newOf(v any) any { return reflect.New(reflect.TypeOf(v)).Interface() }

// derefAny returns the value p points to.
func derefAny(p any) any { return reflect.ValueOf(p).Elem().Interface() }

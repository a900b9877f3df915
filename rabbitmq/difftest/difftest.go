// Package difftest is the differential suite of lapse's RabbitMQ front-end: one
// list of scenarios, each driving the official Go client (amqp091-go) against an
// AMQP URL and writing a transcript, a list of text lines of what a client can
// observe. The same scenario runs against the real RabbitMQ 3.10 and against
// lapse; the transcripts must be equal. RabbitMQ's transcripts are recorded as
// golden files in testdata/golden (TestRabbitMQ with -update).
//
// Transcripts hold only deterministic observations, normalised: timestamps are
// written <time>, server-generated queue names amq.gen-<n> and consumer tags
// amq.ctag-<n> by order of appearance, table values with their Go type (the
// integer widths on the wire must match too), table keys sorted.
//
// Rule IDs (RB-1 ... RB-12, RB-14) are those of SEMANTICS.md. RB-13 (expiry during
// downtime) needs a broker restart and is not covered here.
//
// What a target must serve besides what the scenarios use: every scenario
// deletes its queues and exchanges (named d.<scenario>.*) before and after it
// on a connection of its own; asynchronous methods (basic.publish outside
// confirm mode, basic.ack, nack, reject) are followed by a passive
// exchange.declare of amq.direct, whose reply shows whether the channel is
// still open; Management scenarios PUT and DELETE policies and operator
// policies and read GET /api/queues/%2F/{name}.
//
// Recording: .ci/rabbitmq start prints LAPSE_DIFF_RABBITMQ_URL and
// LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL; with both exported,
// go test ./rabbitmq/difftest -run TestRabbitMQ -update rewrites the golden
// files, and without -update compares with them.
package difftest

import (
	"embed"
	"strings"
	"testing"
	"time"
)

// Target is a broker the scenarios run against.
type Target struct {
	Name string // "rabbitmq", "lapse"
	URL  string // amqp://guest:guest@127.0.0.1:5673/
	// ManagementURL is the management HTTP API with credentials,
	// http://guest:guest@127.0.0.1:15673, or "" if not available (scenarios
	// needing it say so with Scenario.Management).
	ManagementURL string
	// Wait lets d of broker time pass: a real sleep for RabbitMQ, a clock
	// advance for lapse's virtual clock. Scenarios call it to let TTLs run out;
	// they never sleep themselves for expiry.
	Wait func(tb testing.TB, d time.Duration)
}

// Scenario is one differential scenario.
type Scenario struct {
	Name       string   // unique, e.g. "RB1QueueTTLExpiresMessage"; also the golden file name
	Rules      []string // rule IDs it proves, e.g. {"RB-1", "RB-3"}; empty for pure protocol scenarios
	Management bool     // needs Target.ManagementURL
	Run        func(s *S)
}

// Scenarios returns every scenario, grouped by theme.
func Scenarios() []Scenario {
	var all []Scenario
	for _, group := range [][]Scenario{
		ttlScenarios(),
		requeueScenarios(),
		validationScenarios(),
		expirationScenarios(),
		queueTTLScenarios(),
		quorumScenarios(),
		deadLetterScenarios(),
		xDeathScenarios(),
		policyScenarios(),
		routingScenarios(),
		headersScenarios(),
		basicScenarios(),
		errorScenarios(),
		refusalScenarios(),
		rawScenarios(),
		connectionScenarios(),
		dispatchScenarios(),
		maxLengthScenarios(),
		redeliveryScenarios(),
		priorityScenarios(),
	} {
		all = append(all, group...)
	}
	return all
}

// Run runs sc against target and returns its normalised transcript. It fails
// tb on harness errors (a broker that cannot be reached, a client-side
// error); broker errors are observations and go into the transcript.
func Run(tb testing.TB, target Target, sc Scenario) []string {
	tb.Helper()
	s := newS(tb, target, sc)
	defer s.cleanup()
	sc.Run(s)
	return s.lines
}

//go:embed testdata/golden/*.txt
var golden embed.FS

// Golden returns the recorded RabbitMQ transcript of the scenario called name,
// ok false if there is none.
func Golden(name string) ([]string, bool) {
	b, err := golden.ReadFile("testdata/golden/" + name + ".txt")
	if err != nil {
		return nil, false
	}
	return ParseTranscript(string(b)), true
}

// FormatTranscript renders a transcript as a golden file's text: one line each,
// newline-terminated.
func FormatTranscript(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// ParseTranscript is FormatTranscript's inverse.
func ParseTranscript(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return []string{}
	}
	return strings.Split(text, "\n")
}

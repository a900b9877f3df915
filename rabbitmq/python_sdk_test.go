package rabbitmq_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// The current pika (1.4) and aio-pika (10.x) of requirements.txt, from
// the venv that .ci/run makes ($LAPSE_PYTHON_SDK), against the server:
// each scenario of testdata/python/current_clients.py runs against a
// fresh server, its management API and clock control, and prints one
// JSON line, checked here (issue 27). Debian's pika 1.2 and kombu keep
// their own tests (python_test.go).

// pythonSDK is the venv's interpreter when it has the pinned pika and
// aio-pika.
func pythonSDK(t *testing.T) string {
	t.Helper()
	return clienttest.PythonSDK(t, "import pika, aio_pika; assert pika.__version__.startswith('1.4'), pika.__version__; "+
		"assert aio_pika.__version__.startswith('10.'), aio_pika.__version__")
}

// currentDeadLetter is what the ttl-dead-letter scenarios report.
type currentDeadLetter struct {
	Confirm              string
	Before, At59s, After int
	Body, App            string
	DeliveryMode         int
	RoutingKey           string
	Reason, Queue        string
	Exchange             string
	RoutingKeys          []string
	Count                int
	Fields               []string
	TimeType             string
	FirstDeathReason     string
	FirstDeathQueue      string
	FirstDeathExchange   string
}

// currentReconnect is what the reconnect scenarios report.
type currentReconnect struct {
	Before       []string
	DeleteStatus int
	Closed       *struct {
		Code int
		Text string
	}
	Reconnected   bool
	After         []string
	ListedAfter   int
	NewConnection bool
}

// rule: RB-1, RB-9, RB-12 — issue 27: pika 1.4 and aio-pika 10 publish
// with confirms into a TTL queue; the message expires on the moved clock
// (not a moment before) into the dead-letter exchange, and each client
// decodes x-death with RabbitMQ's fields in RabbitMQ's order.
func TestIssue27_PythonCurrentClientsDeadLetter(t *testing.T) {
	python := pythonSDK(t)
	fields := []string{"count", "reason", "queue", "time", "exchange", "routing-keys"}
	for _, c := range []struct {
		scenario string
		want     currentDeadLetter
	}{
		{"pika-ttl-dead-letter", currentDeadLetter{Before: 1, At59s: 1, After: 0, Body: "m1", App: "pika14",
			DeliveryMode: 2, RoutingKey: "job", Reason: "expired", Queue: "pika14.work", Exchange: "pika14.jobs",
			RoutingKeys: []string{"job"}, Count: 1, Fields: fields, TimeType: "datetime",
			FirstDeathReason: "expired", FirstDeathQueue: "pika14.work", FirstDeathExchange: "pika14.jobs"}},
		{"aio-ttl-dead-letter", currentDeadLetter{Confirm: "Ack", Before: 1, At59s: 1, After: 0, Body: "m1",
			App: "aio-pika", DeliveryMode: 2, RoutingKey: "job", Reason: "expired", Queue: "aio.work",
			Exchange: "aio.jobs", RoutingKeys: []string{"job"}, Count: 1, Fields: fields, TimeType: "datetime",
			FirstDeathReason: "expired", FirstDeathQueue: "aio.work", FirstDeathExchange: "aio.jobs"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			got := runPython(t, python, "current_clients.py", c.scenario, pythonEnv(t), c.want)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.scenario, diff)
			}
		})
	}
}

// issue 27: against lapse and a real RabbitMQ, a consumer goes on after the test closed its connection
// through the management API (DELETE /api/connections/{name}, 320
// CONNECTION_FORCED with the X-Reason text): pika 1.4 by connecting
// again itself, aio-pika 10 by its robust connection's own recovery of
// the channel, the queue and the consumer.
func TestIssue27_PythonCurrentClientsReconnect(t *testing.T) {
	python := pythonSDK(t)
	closed := func(text string) *struct {
		Code int
		Text string
	} {
		return &struct {
			Code int
			Text string
		}{320, "CONNECTION_FORCED - " + text}
	}
	for _, c := range []struct {
		scenario string
		want     currentReconnect
	}{
		{"pika-reconnect", currentReconnect{Before: []string{"m1"}, DeleteStatus: 204,
			Closed: closed("pika reconnect test"), After: []string{"m2"}, ListedAfter: 1, NewConnection: true}},
		{"aio-reconnect", currentReconnect{Before: []string{"m1"}, DeleteStatus: 204, Reconnected: true,
			After: []string{"m2"}, ListedAfter: 1, NewConnection: true}},
	} {
		for target, env := range recoveryTargets(t) {
			t.Run(c.scenario+"/"+target, func(t *testing.T) {
				if env == nil {
					env = pythonEnv(t)
				}
				got := runPython(t, python, "current_clients.py", c.scenario, env, c.want)
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("%s against %s (-want +got):\n%s", c.scenario, target, diff)
				}
			})
		}
	}
}

// recoveryTargets are the brokers a recovery scenario runs against, each
// with its environment: lapse (nil: a fresh server for each run) and, when
// LAPSE_DIFF_RABBITMQ_URL and LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL name one
// (as in CI, which must), a real RabbitMQ, so lapse's side is checked
// against the broker's.
func recoveryTargets(t *testing.T) map[string][]string {
	t.Helper()
	targets := map[string][]string{"lapse": nil}
	if url, mgmt := os.Getenv("LAPSE_DIFF_RABBITMQ_URL"), os.Getenv("LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL"); url != "" && mgmt != "" {
		targets["rabbitmq"] = []string{"LAPSE_AMQP_URL=" + url, "LAPSE_MANAGEMENT_URL=" + mgmt}
	} else if os.Getenv("CI") != "" {
		t.Error("CI must run this against RabbitMQ too: LAPSE_DIFF_RABBITMQ_URL and _MANAGEMENT_URL are not set")
	}
	return targets
}

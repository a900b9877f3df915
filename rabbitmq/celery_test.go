package rabbitmq_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// celeryPython is the venv's interpreter when it has requirements.txt's
// Celery, and the pika and aio-pika of current_clients.py, whose helpers
// the Celery scenarios import.
func celeryPython(t *testing.T) string {
	t.Helper()
	return clienttest.PythonSDK(t, "import celery, pika, aio_pika; assert celery.__version__ == '5.7.0', celery.__version__")
}

// celeryWorker is what celery_app.py's celery-worker scenario reports.
type celeryWorker struct {
	Sum          int
	Sums         []int
	Pongs        int
	Pong         []string
	ActiveQueues []string
	PidboxQueues int
	PidboxArgs   map[string]any
	ResultQueues int
	ResultArgs   map[string]any
}

// Celery 5.7 on kombu's py-amqp transport, against lapse and a real
// RabbitMQ: a worker in the script's process runs tasks whose results come
// back over rpc://, and answers ping and inspect through the control
// exchange, whose reply queues Celery declares with x-expires and
// x-message-ttl.
func TestCeleryWorker(t *testing.T) {
	python := celeryPython(t)
	for target, env := range recoveryTargets(t) {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			if env == nil {
				env = pythonEnv(t)
			}
			got := runPython(t, python, "celery_app.py", "celery-worker", env, celeryWorker{})
			want := celeryWorker{Sum: 5, Sums: []int{0, 2, 4}, Pongs: 1, Pong: []string{"pong"},
				ActiveQueues: []string{"TASKS"},
				// Celery's control_queue_expires (10 s) and control_queue_ttl (300 s).
				PidboxQueues: 1, PidboxArgs: map[string]any{"x-expires": 10000.0, "x-message-ttl": 300000.0},
				// result_expires, 300 s here.
				ResultQueues: 1, ResultArgs: map[string]any{"x-expires": 300000.0}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("against %s (-want +got):\n%s", target, diff)
			}
		})
	}
}

// celeryCountdown is what celery_app.py's celery-countdown scenario reports.
type celeryCountdown struct {
	Levels     []string
	Level11    map[string]any
	Published  bool
	At0        map[string]int
	At2048     map[string]int
	At3599     map[string]int
	At3600     map[string]int
	TaskID     bool
	TaskName   string
	ETA        bool
	RoutingKey string
	XDeath     []string
}

// rule: RB-1, RB-9, RB-12 — a Celery task with a countdown of an hour,
// on a quorum queue, goes through Celery's native delayed delivery, which
// the worker declares: 28 topic exchanges and quorum queues of
// x-message-ttl 2^level s, each dead-lettering (at-least-once) to the
// next level's exchange, the message's routing key holding the delay's
// bits. It waits in the levels of 3,600's bits (11, 10, 9 and 4), and
// reaches its task queue when lapse's clock has moved an hour, not a
// second before, with one x-death entry per level it expired from.
// Against a real RabbitMQ, whose clock cannot move, the topology and the
// message's first level are compared.
func TestCeleryCountdownOnTheMovedClock(t *testing.T) {
	python := celeryPython(t)
	levels := make([]string, 28)
	for i := range levels {
		levels[i] = fmt.Sprintf("celery_delayed_%d", i)
	}
	slices.Sort(levels) // as the script lists them
	level11 := map[string]any{"x-message-ttl": 2048000.0, "x-dead-letter-exchange": "celery_delayed_10",
		"x-queue-type": "quorum", "x-overflow": "reject-publish", "x-dead-letter-strategy": "at-least-once"}
	for target, env := range recoveryTargets(t) {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			want := celeryCountdown{Levels: levels, Level11: level11, Published: true,
				At0: map[string]int{"level11": 1, "task": 0}}
			if env == nil {
				env = pythonEnv(t)
				want.At2048 = map[string]int{"level11": 0, "level10": 1, "task": 0}
				want.At3599 = map[string]int{"level4": 1, "task": 0}
				want.At3600 = map[string]int{"level4": 0, "task": 1}
				want.TaskID, want.TaskName, want.ETA, want.RoutingKey = true, "TASKS.add", true, "TASKS"
				// The newest first, then the others as RabbitMQ 3.10 leaves them:
				// it regroups the entries at each death, which reverses them
				// when there are two or more (rabbitmq/deadletter.go).
				want.XDeath = []string{"celery_delayed_4", "celery_delayed_10", "celery_delayed_11", "celery_delayed_9"}
			}
			got := runPython(t, python, "celery_app.py", "celery-countdown", env, celeryCountdown{})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("against %s (-want +got):\n%s", target, diff)
			}
		})
	}
}

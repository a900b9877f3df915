package server

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/rabbitmq/difftest"
)

// TestDifferentialRabbitMQ runs every scenario of the differential suite
// against lapse on its virtual clock and compares the transcripts with
// RabbitMQ's, recorded in difftest's golden files (which difftest's
// TestRabbitMQ checks against a live rabbitmq-server in CI). Waiting for a
// TTL is a clock advance here: nothing sleeps.
func TestDifferentialRabbitMQ(t *testing.T) {
	// The scenarios make hundreds of management requests and close many
	// channels with errors on purpose: log only what is worse, so that a
	// failing scenario's diff is not lost in the log.
	m := MustStartQuiet(t, "--clock", "frozen")
	target := difftest.Target{
		Name:          "lapse",
		URL:           "amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/",
		ManagementURL: "http://guest:guest@" + dialable(m.management.Addr().String()),
		Wait: func(tb testing.TB, d time.Duration) {
			tb.Helper()
			now, err := m.Clock.Advance(d)
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := m.Engine.ApplyDue(context.Background(), now); err != nil {
				tb.Fatal(err)
			}
		},
	}
	for _, sc := range difftest.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Management && target.ManagementURL == "" {
				t.Skip("the management API is not served yet")
			}
			want, ok := difftest.Golden(sc.Name)
			if !ok {
				t.Fatalf("no golden transcript for %s: record it against RabbitMQ (difftest -update)", sc.Name)
			}
			got := difftest.Run(t, target, sc)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lapse differs from RabbitMQ (-rabbitmq +lapse):\n%s", diff)
			}
		})
	}
}

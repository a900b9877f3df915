package difftest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the RabbitMQ in LAPSE_DIFF_RABBITMQ_URL")

// skipOrFail skips a test that needs a real RabbitMQ, except in CI (CI set),
// where a missing broker is a failure: CI must run the comparison.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI must not skip this test (start one with .ci/rabbitmq start)", why)
	}
	t.Skip(why)
}

// TestRabbitMQ runs every scenario against a real RabbitMQ 3.10 and compares
// its transcript with the golden file; with -update it rewrites the golden
// files instead. Start the broker with .ci/rabbitmq start and export the two
// variables it prints.
func TestRabbitMQ(t *testing.T) {
	url := os.Getenv("LAPSE_DIFF_RABBITMQ_URL")
	mgmt := os.Getenv("LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL")
	if url == "" {
		skipOrFail(t, "LAPSE_DIFF_RABBITMQ_URL is not set")
	}
	target := Target{
		Name:          "rabbitmq",
		URL:           url,
		ManagementURL: mgmt,
		Wait:          func(_ testing.TB, d time.Duration) { time.Sleep(d) },
	}
	for _, sc := range Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Management && mgmt == "" {
				skipOrFail(t, "LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL is not set")
			}
			got := Run(t, target, sc)
			if *update {
				path := filepath.Join("testdata", "golden", sc.Name+".txt")
				if err := os.WriteFile(path, []byte(FormatTranscript(got)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := Golden(sc.Name)
			if !ok {
				t.Fatalf("no golden file testdata/golden/%s.txt; record it with -update", sc.Name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("transcript differs from the golden file (-golden +rabbitmq):\n%s", diff)
			}
		})
	}
}

package main

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The lapse binary keeps its GC's heap goal at least gcfloor.Floor above the
// live heap (internal/gcfloor): after a cycle its GC percent, which the
// control port's metrics give as go_gc_gogc_percent, is above GOGC's
// default 100, figured for a live heap of a few MiB. A user's GOGC is kept
// as set.
func TestBinaryKeepsGCHeadroomUnlessGOGCIsSet(t *testing.T) {
	bin := MustBuild(t)
	for _, c := range []struct {
		name string
		env  []string
		want func(p int) bool
		says string
	}{
		{"default", nil, func(p int) bool { return p > 100 }, "above 100"},
		{"GOGC=150", []string{"GOGC=150"}, func(p int) bool { return p == 150 }, "150, the user's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustSpawnEnv(t, bin, c.env, serveArgs(filepath.Join(t.TempDir(), "data"))...)
			client := &http.Client{Timeout: 10 * time.Second}
			var percent int
			deadline := time.Now().Add(10 * time.Second)
			for {
				// A heap profile with gc=1 runs a cycle; the tuner sets the
				// percent on the runtime's finalizer goroutine right after.
				resp, err := client.Get(p.url + "/debug/pprof/heap?gc=1")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				percent = gcPercent(t, client, p.url)
				if c.want(percent) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !c.want(percent) {
				t.Errorf("go_gc_gogc_percent %d after a cycle, want %s", percent, c.says)
			}
		})
	}
}

// gcPercent reads go_gc_gogc_percent from lapse's metrics at base.
func gcPercent(t *testing.T, client *http.Client, base string) int {
	t.Helper()
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_gc_gogc_percent "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("go_gc_gogc_percent %q: %v", v, err)
			}
			return int(f)
		}
	}
	t.Fatal("the metrics have no go_gc_gogc_percent")
	return 0
}

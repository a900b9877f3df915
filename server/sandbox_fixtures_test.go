package server

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/dashboard"
)

// The test fixtures of issue 29.3 (fixtures/js, fixtures/python) against
// ONE lapse: each runner runs its files in parallel workers, every test in
// a sandbox of its own with the same Cosmos DB names ("shop"/"carts") or
// RabbitMQ queues ("jobs", "dead-jobs": amqplib and pika reach the sandbox
// by the virtual host of its URL), and its own clock moves. Without
// sandboxes the tests collide: a second create of "shop" is 409, one
// test's clock move expires another's carts, and the queues count the
// other test's messages.

// fixturesDir is the repository's folder of the test fixtures.
const fixturesDir = "../fixtures"

// runFixtures runs name with args in dir against m (LAPSE_URL), fails the
// test with the runner's output when it fails, and logs how long it took.
func runFixtures(t *testing.T, m *Main, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LAPSE_URL="+controlURL(m), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s %v in %s: %v (%v)\n%s", filepath.Base(name), args, dir, err, ctx.Err(), out.Bytes())
	}
	t.Logf("%s %v: passed in %v (wall) against one lapse\n%s", filepath.Base(name), args, took.Round(time.Millisecond), clienttest.LastLine(out.Bytes()))
}

// mustBeClean checks that the fixtures disposed of every sandbox and left
// nothing in the default world.
func mustBeClean(t *testing.T, m *Main) {
	t.Helper()
	var left []dashboard.Sandbox
	MustAPI(t, m).get("/api/sandboxes", &left)
	if len(left) != 0 {
		t.Errorf("%d sandboxes left after the run, want every one disposed of: %+v", len(left), left)
	}
	for _, protocol := range []string{"cosmos", "rabbitmq"} {
		var entities []dashboard.EntityView
		MustAPI(t, m).get("/api/entities?protocol="+protocol, &entities)
		var made []string
		for _, e := range entities {
			// What every broker has: vhost / and its amq.* exchanges.
			if e.Name != "vhost:/" && !strings.HasPrefix(e.Name, "exchange:/amq.") {
				made = append(made, e.Name)
			}
		}
		if len(made) != 0 {
			t.Errorf("the default world has %s entities after the run, want none: %q", protocol, made)
		}
	}
}

// issue 29.3: lapse-sandbox's vitest files, run four at once by vitest's
// workers against one lapse.
func TestSandboxFixtures_JS(t *testing.T) {
	dir := filepath.Join(fixturesDir, "js")
	clienttest.Node(t, dir, "vitest", "@azure/cosmos", "amqplib")
	npx, err := exec.LookPath("npx")
	if err != nil {
		clienttest.Need(t, "no npx on PATH (Debian's npm)")
		return
	}
	m := MustStart(t)
	runFixtures(t, m, dir, npx, "--no-install", "vitest", "run")
	mustBeClean(t, m)
}

// issue 29.3: pytest-lapse's tests, run by pytest-xdist's four workers
// against one lapse; the plugin is loaded by its entry point (.ci/run
// installs fixtures/python into the SDK venv).
func TestSandboxFixtures_Python(t *testing.T) {
	python := clienttest.PythonSDK(t, "import pytest_lapse, xdist, azure.cosmos, pika")
	m := MustStart(t)
	runFixtures(t, m, "..", python, "-m", "pytest", "-n", "4", "-p", "no:cacheprovider", "fixtures/python/tests")
	mustBeClean(t, m)
}

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// pythonDir holds the Python scripts the tests run.
const pythonDir = "testdata/python"

// runPython runs script (in pythonDir) with args and the extra
// environment env, and returns the one JSON line it printed.
func runPython(tb testing.TB, python, script string, env []string, args ...string) []byte {
	tb.Helper()
	return runPythonIn(tb, pythonDir, python, script, env, args...)
}

// runPythonIn is runPython with the script in dir.
func runPythonIn(tb testing.TB, dir, python, script string, env []string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		tb.Fatalf("python3 %s %s: %v (%v)\nstdout: %s\nstderr: %s", script, strings.Join(args, " "), err, ctx.Err(), stdout.Bytes(), stderr.Bytes())
	}
	line := clienttest.LastLine(stdout.Bytes())
	if !json.Valid(line) {
		tb.Fatalf("python3 %s %s printed %q, want a JSON line\nstderr: %s", script, strings.Join(args, " "), stdout.Bytes(), stderr.Bytes())
	}
	return line
}

// MustStartOnLoopback starts a lapse whose AMQPS port is the service's,
// 5671, on an address of its own in 127.0.0.0/8, for clients that always
// dial 5671 (azure-servicebus before 7.9): it returns the lapse and that
// address, which its certificate covers. Every other port is free-picked.
func MustStartOnLoopback(tb testing.TB, args ...string) (*Main, string) {
	tb.Helper()
	var errs []string
	for range 20 {
		ip := fmt.Sprintf("127.%d.%d.%d", rand.IntN(256), rand.IntN(256), 2+rand.IntN(253))
		m := NewMain()
		m.Stderr = io.Discard
		all := append([]string{"--amqps-addr", ip + ":5671", "--cert-hosts", ip}, args...)
		if err := m.ParseFlags(serveArgs(filepath.Join(tb.TempDir(), "data"), all...), noEnv); err != nil {
			tb.Fatal(err)
		}
		m.Logger = slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
		if err := m.Run(context.Background()); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		tb.Cleanup(func() {
			if err := m.Close(context.Background()); err != nil {
				tb.Error(err)
			}
		})
		return m, ip
	}
	tb.Fatalf("no loopback address with port 5671 free (is a lapse or a broker listening on :5671?): %s", strings.Join(errs, "; "))
	return nil, ""
}

// MustCertFile writes lapse's certificate, downloaded from GET /cert.pem,
// to a file, as users save it to trust it.
func MustCertFile(tb testing.TB, m *Main) string {
	tb.Helper()
	_, certPEM := MustTrustLapse(tb, m)
	path := filepath.Join(tb.TempDir(), "lapse.crt")
	if err := os.WriteFile(path, certPEM, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

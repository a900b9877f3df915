package main

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
)

// pythonDir holds the Python scripts the tests run.
const pythonDir = "testdata/python"

// mustPython returns a Python interpreter that imports every module of
// modules: $LAPSE_PYTHON when set, else the first of python3 on PATH and
// Debian's /usr/bin/python3 that does (Debian's python3-* packages import
// only in Debian's interpreter). Without one the test skips, but fails
// under CI, whose .ci/run installs them.
func mustPython(tb testing.TB, modules ...string) string {
	tb.Helper()
	candidates := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("LAPSE_PYTHON"); p != "" {
		candidates = []string{p}
	}
	check := "import " + strings.Join(modules, ", ")
	var errs []string
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err == nil {
			var out []byte
			if out, err = exec.Command(path, "-c", check).CombinedOutput(); err == nil {
				return path
			}
			err = fmt.Errorf("%v: %s", err, bytes.TrimSpace(lastLine(out)))
		}
		errs = append(errs, c+": "+err.Error())
	}
	msg := fmt.Sprintf("the Python client tests need a python3 that can %q (Debian's python3-azure, python3-azure-cosmos, python3-pika, python3-kombu): %s",
		check, strings.Join(errs, "; "))
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// runPython runs script (in pythonDir) with args and the extra
// environment env, and returns the one JSON line it printed.
func runPython(tb testing.TB, python, script string, env []string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	cmd.Dir = pythonDir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		tb.Fatalf("python3 %s %s: %v (%v)\nstdout: %s\nstderr: %s", script, strings.Join(args, " "), err, ctx.Err(), stdout.Bytes(), stderr.Bytes())
	}
	line := lastLine(stdout.Bytes())
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

package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// MustHoldPort listens on a free port of every interface until the end of
// the test and returns its address as a flag takes it (":PORT").
func MustHoldPort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ":" + port
}

// issue 15.5: when ports are taken, lapse serve reports every listener
// that cannot bind, one line each naming the listener and its flag, and
// exits 1 before it opens the data folder.
func TestTakenPortsAreAllReportedWithTheirFlags(t *testing.T) {
	amqp, cosmos, control := MustHoldPort(t), MustHoldPort(t), MustHoldPort(t)
	data := filepath.Join(t.TempDir(), "data")
	args := serveArgs(data, "--amqp-addr", amqp, "--cosmos-addr", cosmos, "--control-addr", control)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, noEnv, &stdout, &stderr)
	want := "lapse: cannot listen on " + amqp + " (AMQP, --amqp-addr): address already in use\n" +
		"lapse: cannot listen on " + cosmos + " (Cosmos DB, --cosmos-addr): address already in use\n" +
		"lapse: cannot listen on " + control + " (control API, --control-addr): address already in use\n"
	if code != 1 || stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant 1 and stderr:\n%s", code, stdout.String(), stderr.String(), want)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data folder was made: %v", err)
	}
}

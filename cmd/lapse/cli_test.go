package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/server"
)

func TestLockedDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	MustStart(t, "--data", dir)

	second := server.NewMain()
	second.Stderr = io.Discard
	if err := second.ParseFlags(serveArgs(dir), noEnv); err != nil {
		t.Fatal(err)
	}
	err := second.Run(context.Background())
	if core.ErrorCode(err) != core.ERESOURCELOCKED {
		t.Errorf("second Run on the same folder: %v, want a %s error", err, core.ERESOURCELOCKED)
	}

	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append([]string{"serve"}, serveArgs(dir)...), noEnv, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, `lapse: data folder "`+dir+`" is in use by another lapse process`) {
		t.Errorf("stderr = %q, want one line saying the folder is in use", got)
	}
}

// A data folder lapse cannot use stops it with one line on stderr and exit
// code 1, and is left as it was.
func TestUnusableDataFolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    string
	}{
		{"NotADatabase", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "lapse.db"), "my notes")
		}, "lapse.db is not a SQLite database"},
		{"NewerSchema", func(t *testing.T, dir string) {
			m := MustStart(t, "--data", dir)
			if err := m.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", filepath.Join(dir, "lapse.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("PRAGMA user_version = 9999"); err != nil {
				t.Fatal(err)
			}
		}, "was written by a newer lapse (schema 9999"},
		{"DataIsAFile", func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, dir, "not a folder")
		}, "cannot be made"},
		{"Unreadable", func(t *testing.T, dir string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads every file: TestBinaryUnreadableDataFolder runs this case as another user")
			}
			mustWrite(t, filepath.Join(dir, "lapse.db"), "")
			if err := os.Chmod(filepath.Join(dir, "lapse.db"), 0); err != nil {
				t.Fatal(err)
			}
		}, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, dir)
			before := snapshot(t, dir)

			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), serveArgs(dir), noEnv, &stdout, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			got := stderr.String()
			if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "lapse: ") || !strings.Contains(got, tc.want) {
				t.Errorf("stderr = %q, want one line saying %q", got, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("the data folder changed (-before +after):\n%s", diff)
			}
		})
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot returns the contents of the files of dir (or of dir itself when
// it is a file), but the lock file's, which holds the last process id.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "lapse.lock" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			out[p] = "unreadable: " + err.Error()
			return nil
		}
		out[p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSubcommands(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	url := controlURL(m)
	MustCreate(t, m, orders)
	MustEnqueue(t, m, orders.EntityKey, core.Item{})
	t0 := m.Clock.Now().UTC()
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	env := func(k string) string {
		if k == "LAPSE_CONTROL_URL" {
			return url
		}
		return ""
	}
	type result struct {
		Code           int
		Stdout, Stderr string
	}
	for _, tc := range []struct {
		args []string
		env  func(string) string
		want result
	}{
		{[]string{"clock", "--control-url", url}, noEnv, result{0, at(0) + " frozen\n", ""}},
		{[]string{"clock"}, env, result{0, at(0) + " frozen\n", ""}},
		{[]string{"clock", "advance", "15m", "--control-url", url}, noEnv, result{0, at(15*time.Minute) + " frozen (1 events applied)\n", ""}},
		{[]string{"events"}, env, result{0, "1\t" + at(15*time.Minute) + "\tservicebus\torders\t1\texpired\tSB-8\tTTL ran out (entity default TTL 10m), applied 5m after it was due\n", ""}},
		{[]string{"events", "--since", "1"}, env, result{0, "", ""}},
		{[]string{"events", "--protocol", "rabbitmq"}, env, result{0, "", ""}},
		{[]string{"events", "--protocol", "servicebus", "--entity", "orders", "--limit", "1"}, env, result{0, "1\t" + at(15*time.Minute) + "\tservicebus\torders\t1\texpired\tSB-8\tTTL ran out (entity default TTL 10m), applied 5m after it was due\n", ""}},
		{[]string{"clock", "advance", "P1D"}, env, result{0, at(24*time.Hour+15*time.Minute) + " frozen (0 events applied)\n", ""}},
		{[]string{"clock", "set", at(48 * time.Hour)}, env, result{0, at(48*time.Hour) + " frozen (0 events applied)\n", ""}},
		{[]string{"clock", "set", "2000-01-01T00:00:00Z"}, env, result{1, "", "lapse: cannot set the clock back from " + at(48*time.Hour) + " to 2000-01-01T00:00:00Z (HTTP 400)\n"}},
		{[]string{"clock", "advance", "soon"}, env, result{1, "", "lapse: invalid duration \"soon\": use a Go duration like 15m or an ISO 8601 one like P14D (HTTP 400)\n"}},
		{[]string{"clock", "freeze"}, env, result{0, at(48*time.Hour) + " frozen\n", ""}},
		{[]string{"healthcheck"}, env, result{0, "", ""}},
		{[]string{"version"}, noEnv, result{0, "lapse dev (" + runtimeVersion() + ")\n", ""}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, tc.env, &stdout, &stderr)
		if diff := cmp.Diff(tc.want, result{code, stdout.String(), stderr.String()}); diff != "" {
			t.Errorf("lapse %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
		}
	}

	// resume leaves the clock running ahead of the wall: its time is not
	// known in advance.
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"clock", "resume"}, env, &stdout, &stderr); code != 0 || !strings.HasSuffix(stdout.String(), " offset\n") {
		t.Errorf("lapse clock resume: %d %q %q", code, stdout.String(), stderr.String())
	}
	if m.Clock.Mode() != core.ClockOffset {
		t.Errorf("clock mode after resume: %s", m.Clock.Mode())
	}
}

func TestSubcommandErrors(t *testing.T) {
	dead := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		code int
		want string // the first line of stderr
	}{
		{[]string{"healthcheck", "--control-url", dead}, 1, "lapse: cannot reach lapse at " + dead + ": "},
		{[]string{"clock", "--control-url", dead}, 1, "lapse: cannot reach lapse at " + dead + ": "},
		{[]string{"clock", "advance"}, 2, "lapse: usage: lapse clock advance DURATION (15m, P14D)"},
		{[]string{"clock", "set"}, 2, "lapse: usage: lapse clock set TIME (RFC 3339)"},
		{[]string{"clock", "freeze", "now"}, 2, "lapse: clock freeze takes no arguments"},
		{[]string{"clock", "rewind"}, 2, `lapse: unknown clock command "rewind"`},
		{[]string{"events", "--since", "x"}, 2, `lapse: invalid value "x" for flag -since: parse error`},
		{[]string{"events", "all"}, 2, `lapse: unexpected argument "all"`},
		{[]string{"healthcheck", "now"}, 2, "lapse: healthcheck takes no arguments"},
		{[]string{"rewind"}, 2, `lapse: unknown command "rewind"`},
		// issue 15.9: the benchmark client left the server binary.
		{[]string{"bench", "--scenarios", "cosmos"}, 2, "lapse: the benchmark client is its own command now: go run ./cmd/lapse-bench --scenarios cosmos"},
		{[]string{"serve", "--clock", "fast"}, 2, `lapse: --clock "fast": use "real" or "frozen"`},
		{[]string{"--servicebus-config", "/nonexistent/Config.json"}, 1, "lapse: --servicebus-config: open /nonexistent/Config.json: no such file or directory"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, noEnv, &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != tc.code || !strings.HasPrefix(first, tc.want) {
			t.Errorf("lapse %s: exit %d, stderr %q; want %d, %q", strings.Join(tc.args, " "), code, first, tc.code, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"help"}, noEnv, &stdout, &stderr); code != 0 || stdout.String() != usage {
		t.Errorf("lapse help: %d %q", code, stdout.String())
	}
}

// issue 25: a data folder whose journal is damaged before its end stops
// lapse with one line on stderr that names the journal, the offset of the
// bad record and the flag that repairs it, and exit code 1.
func TestDamagedJournalStopsLapse(t *testing.T) {
	m := MustStart(t)
	MustCreate(t, m, orders)
	MustEnqueue(t, m, orders.EntityKey, core.Item{Body: []byte("order"), Persistent: true})
	// The folder as a kill -9 would leave it now: the journal holds the
	// writes.
	dir := t.TempDir()
	for _, name := range []string{"lapse.db", "lapse.db-wal", "lapse.journal"} {
		b, err := os.ReadFile(filepath.Join(m.Config.Data, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if name == "lapse.journal" {
			b[len("lapse journal 1\n")+10] ^= 0x10 // the first record's data
		}
		mustWrite(t, filepath.Join(dir, name), string(b))
	}

	// Should lapse start, it stops when ctx ends, with exit code 0.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, serveArgs(dir), noEnv, &stdout, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	got := stderr.String()
	want := `lapse: data folder "` + dir + `" cannot be used: journal "` + filepath.Join(dir, "lapse.journal") + `" is damaged at byte 16 `
	if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, want) || !strings.Contains(got, "--repair-journal") {
		t.Errorf("stderr = %q, want one line starting %q and naming --repair-journal", got, want)
	}
}

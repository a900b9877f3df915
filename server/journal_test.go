package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lapse-emulator/lapse/core"
)

// MustCrashImage copies the files of m's data folder, but its lock, to a
// new folder while m runs: what the disk holds if m is killed then, its
// journal holding the writes SQLite may not have.
func MustCrashImage(tb testing.TB, m *Main) string {
	tb.Helper()
	dir := tb.TempDir()
	entries, err := os.ReadDir(m.Config.Data)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "lapse.lock" || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.Config.Data, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// issue 25: a data folder whose journal is damaged before its end stops
// lapse at start with an error that names the journal and the offset of
// the bad record (the lapse command prints it); with --repair-journal,
// lapse logs what it drops and starts.
func TestDamagedJournalStopsStart(t *testing.T) {
	m := MustStart(t)
	k := core.EntityKey{Protocol: core.ServiceBus, Name: "orders"}
	MustCreate(t, m, core.Entity{EntityKey: k, Kind: "queue", Durable: true})
	for range 3 {
		MustEnqueue(t, m, k, core.Item{Body: []byte("order"), Persistent: true})
	}
	dir := MustCrashImage(t, m)
	journal := filepath.Join(dir, "lapse.journal")
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	const first = len("lapse journal 1\n") // where the first record starts
	if len(b) < first+20 {
		t.Fatalf("the journal holds %d bytes, want the records of the writes", len(b))
	}
	b[first+10] ^= 0x10 // in the data of the first record, more following it
	if err := os.WriteFile(journal, b, 0o644); err != nil {
		t.Fatal(err)
	}

	refused := NewMain()
	refused.Stderr = io.Discard
	if err := refused.ParseFlags(serveArgs(dir), noEnv); err != nil {
		t.Fatal(err)
	}
	err = refused.Run(context.Background())
	if core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("Run on a damaged journal: %v, want an %s error", err, core.EINVALID)
	}
	for _, want := range []string{`journal "` + journal + `" is damaged at byte 16 `, "A copy is kept as", "--repair-journal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %v, want it to say %q", err, want)
		}
	}

	repaired := NewMain()
	if err := repaired.ParseFlags(serveArgs(dir, "--repair-journal"), noEnv); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	repaired.Logger = slog.New(slog.NewTextHandler(&log, nil))
	if err := repaired.Run(context.Background()); err != nil {
		t.Fatalf("Run with --repair-journal: %v", err)
	}
	if err := repaired.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("log of the repair:\n%s", log.String())
	for _, want := range []string{"repairing the journal", "offset=16 ", "recordsAfter=", "droppedBytes=", "copy="} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log of lapse --repair-journal lacks %q", want)
		}
	}
}

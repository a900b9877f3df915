package sqlitestore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// resubmitHooks are a protocol whose expired items go to "dlq" with Meta
// "dead:<source>", and whose Resubmit hook sends them back.
func resubmitHooks(dlq core.EntityKey) core.ProtocolHooks {
	return core.ProtocolHooks{
		DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
			it.Meta = []byte("dead:" + from.Name)
			tx.Enqueue(dlq, it)
		},
		Resubmit: func(_ *core.Entity, it core.Item) (string, core.Item, error) {
			src, ok := strings.CutPrefix(string(it.Meta), "dead:")
			if !ok {
				return "", core.Item{}, core.Errorf(core.EINVALID, "not a dead letter")
			}
			it.Meta = nil
			return src, it, nil
		},
	}
}

// A resubmission (core.Engine.Resubmit) is one change: after a restart on
// the same SQLite file the item is in its source, with its new expiry, and
// no longer in the dead-letter queue.
func TestEngineResubmitSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	q := core.EntityKey{Protocol: "test", Name: "q"}
	dlq := core.EntityKey{Protocol: "test", Name: "dlq"}
	ctx := context.Background()
	s := MustOpen(t, dir)
	e := core.NewEngine(core.Config{Store: s})
	e.Register("test", resubmitHooks(dlq))
	if err := e.Recover(ctx, at); err != nil {
		t.Fatal(err)
	}
	for _, en := range []core.Entity{
		{EntityKey: q, Durable: true, Policy: core.Policy{DefaultTTL: core.After(time.Minute), OnExpire: core.DeadLetter}},
		{EntityKey: dlq, Durable: true},
	} {
		if _, _, err := e.Create(at, en); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"x", "y"} {
		if _, _, err := e.Enqueue(at, q, core.Item{Body: []byte(b), Persistent: true}); err != nil {
			t.Fatal(err)
		}
	}
	at = at.Add(time.Minute)
	e.Advance(at)
	at = at.Add(time.Minute)
	if _, c, err := e.Resubmit(at, dlq, 1); err != nil || c.Wait(ctx) != nil {
		t.Fatalf("Resubmit: %v", err)
	}
	MustClose(t, s)

	s = MustOpen(t, dir)
	e = core.NewEngine(core.Config{Store: s})
	e.Register("test", resubmitHooks(dlq))
	if err := e.Recover(ctx, at); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Body string
		Due  time.Time
	}
	rows := func(k core.EntityKey) []row {
		items, err := e.Items(at, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, it := range items {
			out = append(out, row{string(it.Body), it.DueAt})
		}
		return out
	}
	if d := cmp.Diff([]row{{"x", at.Add(time.Minute)}}, rows(q)); d != "" {
		t.Fatalf("q after restart (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]row{{"y", time.Time{}}}, rows(dlq)); d != "" {
		t.Fatalf("dlq after restart (-want +got):\n%s", d)
	}
}

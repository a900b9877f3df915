package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// MustWriteSchema3 makes a data folder as a lapse of schema 3 left it, with
// the rows of sqls in its tables.
func MustWriteSchema3(t *testing.T, dir string, sqls ...string) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, dbName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := apply(ctx, conn, ms[:3]); err != nil {
		t.Fatal(err)
	}
	for _, q := range sqls {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Migration 0004 keeps every item of a schema-3 folder, in Seq order per
// entity, gives each entity a number, and leaves out items of an entity
// that is not stored; the store then writes and deletes in the new
// layout.
func TestMigrationToItemIDsKeepsTheItems(t *testing.T) {
	dir := t.TempDir()
	MustWriteSchema3(t, dir,
		`INSERT INTO entities (protocol, name, kind, parent, dead_letter_queue, durable, policy, settings, meta, created, last_seq) VALUES
			('servicebus', 'orders', 'queue', '', '', 1, '{}', '[]', NULL, NULL, 12),
			('cosmos', 'db/carts', 'container', 'db', '', 1, '{}', '[]', NULL, NULL, 3)`,
		`INSERT INTO items (protocol, name, seq, key, body, meta, state, rule, reason, delivery_count, persistent, item_group) VALUES
			('servicebus', 'orders', 12, '', 'twelve', NULL, 0, 'SB-1', '', 0, 1, ''),
			('servicebus', 'orders', 2, '', 'two', NULL, 0, 'SB-1', '', 1, 1, ''),
			('cosmos', 'db/carts', 3, 'pk|c1', '{"id":"c1"}', 'etag rid', 0, 'CO-1', '', 0, 1, 'pk'),
			('rabbitmq', '/gone', 1, '', 'of no entity', NULL, 0, 'RB-1', '', 0, 1, '')`)
	s := MustOpen(t, dir)
	orders := core.EntityKey{Protocol: core.ServiceBus, Name: "orders"}
	carts := core.EntityKey{Protocol: core.Cosmos, Name: "db/carts"}
	snap := storetest.MustLoad(t, s)
	body := func(k core.EntityKey) (out []string) {
		for _, it := range snap.Items[k] {
			out = append(out, string(it.Body))
		}
		return out
	}
	if got := body(orders); len(got) != 2 || got[0] != "two" || got[1] != "twelve" {
		t.Errorf("items of orders after the migration: %q, want two and twelve", got)
	}
	if got := snap.Items[carts]; len(got) != 1 || got[0].Key != "pk|c1" || got[0].Group != "pk" || string(got[0].Meta) != "etag rid" {
		t.Errorf("items of db/carts after the migration: %+v", got)
	}
	if n := len(snap.Items); n != 2 {
		t.Errorf("items of %d entities, want 2 (none of the entity that is not stored)", n)
	}
	// The store goes on in the new layout: a new entity gets a number of
	// its own, a delete of orders leaves the others.
	fresh := core.EntityKey{Protocol: core.RabbitMQ, Name: "/fresh"}
	mustApply(t, s, entityOp(fresh), itemOp(fresh, 1), itemOp(carts, 4),
		core.Op{Kind: core.OpDeleteItem, Key: orders, Seq: 2})
	mustApply(t, s, core.Op{Kind: core.OpDeleteEntity, Key: orders})
	MustClose(t, s)
	snap = storetest.MustLoad(t, MustOpen(t, dir))
	if len(snap.Items[orders]) != 0 || len(snap.Items[carts]) != 2 || len(snap.Items[fresh]) != 1 {
		t.Errorf("after writes in the new layout: %d, %d, %d items, want 0, 2, 1",
			len(snap.Items[orders]), len(snap.Items[carts]), len(snap.Items[fresh]))
	}
}

// A deleted entity's number goes to the next new entity; a transaction
// that fails gives back the numbers it took.
func TestEntityNumbersAreReusedAndRolledBack(t *testing.T) {
	s := MustOpen(t, t.TempDir())
	a, b, c := core.EntityKey{Protocol: "test", Name: "a"}, core.EntityKey{Protocol: "test", Name: "b"}, core.EntityKey{Protocol: "test", Name: "c"}
	mustApply(t, s, entityOp(a), entityOp(b), itemOp(a, 1), itemOp(b, 1))
	num := func(k core.EntityKey) int64 {
		s.connMu.Lock()
		defer s.connMu.Unlock()
		if r := s.entities.rows[k]; r != nil {
			return r.num
		}
		return 0
	}
	if num(a) != 1 || num(b) != 2 {
		t.Fatalf("numbers %d and %d, want 1 and 2", num(a), num(b))
	}
	mustApply(t, s, core.Op{Kind: core.OpDeleteEntity, Key: a}, entityOp(c), itemOp(c, 1))
	if num(a) != 0 || num(c) != 1 {
		t.Fatalf("after a was deleted and c made: a %d, c %d, want 0 and 1", num(a), num(c))
	}
	// A failed transaction: its entity op is undone.
	s.connMu.Lock()
	s.entities.begin()
	if _, err := s.entities.put(a, 0); err != nil {
		t.Fatal(err)
	}
	s.entities.remove(b)
	s.entities.rollback()
	s.connMu.Unlock()
	if num(a) != 0 || num(b) != 2 || num(c) != 1 {
		t.Fatalf("after a rollback: a %d, b %d, c %d, want 0, 2, 1", num(a), num(b), num(c))
	}
	snap := storetest.MustLoad(t, s)
	if len(snap.Items[b]) != 1 || len(snap.Items[c]) != 1 || len(snap.Items[a]) != 0 {
		t.Errorf("items: a %d, b %d, c %d; want 0, 1, 1", len(snap.Items[a]), len(snap.Items[b]), len(snap.Items[c]))
	}
}

// issue 25.9: the migrations of a new folder are one transaction: when one
// fails, none is applied.
func TestMigrationsApplyAllOrNone(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), dbName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bad := append(ms[:len(ms):len(ms)], migration{version: len(ms) + 1, name: "9999_bad.sql", sql: "CREATE TABLE entities (x)"})
	if err := apply(ctx, conn, bad); err == nil || !strings.Contains(err.Error(), "migration 9999_bad.sql") {
		t.Fatalf("apply: %v, want the bad migration's error", err)
	}
	var version, tables int
	if err := conn.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if version != 0 || tables != 0 {
		t.Errorf("after a failed migration: schema version %d and %d tables, want none", version, tables)
	}
}

package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// migrationFiles are the schema's migrations, NNNN_what.sql, numbered from
// 1 without gaps. A migration, once released, is never edited: a change of
// schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// applicationID marks a SQLite database as lapse's ("laps"), in its header
// (PRAGMA application_id); PRAGMA user_version holds the schema version,
// the number of the last migration applied.
const applicationID = 0x6c617073

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order.
func migrations() ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != len(ms)+1 {
			return nil, fmt.Errorf("migration %s: want a name starting %04d_", e.Name(), len(ms)+1)
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	return ms, nil
}

// migrate checks that the database on conn is lapse's (or empty), turns on
// WAL, and brings it to the latest schema. It changes nothing in a database
// that is not lapse's or that a newer lapse wrote.
func migrate(ctx context.Context, conn *sql.Conn, folder string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	version, err := schemaVersion(ctx, conn, folder, len(ms))
	if err != nil {
		return err
	}
	// WAL is a setting of the database file, kept in its header: set only
	// now that the file is known to be ours.
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return err
	}
	if version == len(ms) {
		return nil
	}
	return apply(ctx, conn, ms[version:])
}

// schemaVersion returns the schema version of the database on conn, or an
// error if it is not lapse's or newer than latest.
func schemaVersion(ctx context.Context, conn *sql.Conn, folder string, latest int) (int, error) {
	var appID, version, tables int
	for _, q := range []struct {
		sql string
		to  *int
	}{
		{`PRAGMA application_id`, &appID},
		{`PRAGMA user_version`, &version},
		{`SELECT count(*) FROM sqlite_schema`, &tables},
	} {
		if err := conn.QueryRowContext(ctx, q.sql).Scan(q.to); err != nil {
			return 0, err
		}
	}
	if appID != applicationID && (appID != 0 || version != 0 || tables != 0) {
		return 0, core.Errorf(core.EINVALID, "data folder %q cannot be used: %s is a SQLite database, but not lapse's", folder, dbName)
	}
	if version > latest {
		return 0, core.Errorf(core.EPRECONDITION, "data folder %q was written by a newer lapse (schema %d, this lapse knows up to %d)", folder, version, latest)
	}
	return version, nil
}

// apply runs the migrations ms, in order, and records the last, in one
// transaction: all or none of them are applied, and a new data folder's
// schema takes one commit rather than one a migration (issue 25.9).
func apply(ctx context.Context, conn *sql.Conn, ms []migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, m := range ms {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	// PRAGMAs take no parameters; both values are ours.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", ms[len(ms)-1].version)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return err
	}
	return tx.Commit()
}

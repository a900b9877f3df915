package server

import (
	"context"
	"log/slog"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/sqlitestore"
)

// store is what Main needs of its store.
type store interface {
	core.Store
	Close(ctx context.Context) error
}

var (
	_ store = (*sqlitestore.Store)(nil)
	_ store = core.DiscardStore{}
)

// openStore opens the data folder dir. A folder in use by another lapse,
// unreadable, written by a newer lapse, or whose journal is damaged before
// its end fails with a one-line *core.Error; none is ever reset. With
// repair, a damaged journal is repaired instead, and log says what was
// dropped.
//
// ":memory:" keeps nothing: the engine holds every item while lapse runs
// and reads its store only at Recover, so the store keeps nothing either
// (core.DiscardStore, as a sandbox that is not durable does). A SQLite
// database in memory was a second copy of each item, written on each
// change for no reader: 7-14% of lapse's CPU per Cosmos DB create,
// upsert or replace, and after 20,000 creates of 1 KB an RSS of 206 MB
// where it is now 117 MB.
func openStore(dir string, repair bool, log *slog.Logger) (store, error) {
	if dir == sqlitestore.Memory {
		return core.DiscardStore{}, nil
	}
	s, err := sqlitestore.Open(dir, sqlitestore.Options{RepairJournal: repair, Logger: log})
	if err != nil {
		return nil, err // not s: a nil *Store in the interface would not be nil
	}
	return s, nil
}

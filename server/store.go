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

var _ store = (*sqlitestore.Store)(nil)

// openStore opens the data folder dir (":memory:" keeps nothing). A folder
// in use by another lapse, unreadable, written by a newer lapse, or whose
// journal is damaged before its end fails with a one-line *core.Error;
// none is ever reset. With repair, a damaged journal is repaired instead,
// and log says what was dropped.
func openStore(dir string, repair bool, log *slog.Logger) (store, error) {
	s, err := sqlitestore.Open(dir, sqlitestore.Options{RepairJournal: repair, Logger: log})
	if err != nil {
		return nil, err // not s: a nil *Store in the interface would not be nil
	}
	return s, nil
}

package server

import (
	"context"

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
// in use by another lapse, unreadable, or written by a newer lapse fails
// with a one-line *core.Error; none is ever reset.
func openStore(dir string) (store, error) {
	s, err := sqlitestore.Open(dir, sqlitestore.Options{})
	if err != nil {
		return nil, err // not s: a nil *Store in the interface would not be nil
	}
	return s, nil
}

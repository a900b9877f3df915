//go:build !unix

package sqlitestore

import "errors"

// errLocked is lockFolder's error for a lock file that another process holds.
var errLocked = errors.New("locked")

// lockFolder does nothing where there is no flock: two lapse processes on
// one data folder are not kept apart there (SQLite's own locking still
// keeps the database whole).
func lockFolder(path string) (unlock func() error, err error) {
	return func() error { return nil }, nil
}

func lockHolder(path string) string { return "" }

//go:build unix

package sqlitestore

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// errLocked is lockFolder's error for a lock file that another process holds.
var errLocked = errors.New("locked")

// lockFolder takes an exclusive flock on the lock file at path, making it
// if needed, and writes this process's id in it. The lock lasts until the
// returned function runs, or until the process ends however it ends: the
// operating system releases it even after kill -9. A second Open of the
// same folder in this process fails too, as flock locks belong to the open
// file, not the process.
func lockFolder(path string) (unlock func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	// The id is for people and for the error of the next lapse; the lock
	// is what counts, so a failure to write it does not matter.
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f.Close, nil
}

// lockHolder returns " (pid N)" with the process id written in the lock
// file at path, or "" if there is none.
func lockHolder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return " (pid " + strconv.Itoa(pid) + ")"
}

package cosmos

import (
	"errors"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// maxChangeAttempts bounds how often a conditional write is planned again
// because another write changed an item it read before it could write;
// past it the answer is 449 Retry With, the service's transient answer
// to conflicting concurrent writes, which a client may safely retry.
const maxChangeAttempts = 32

// reader reads the stored item of a key of a container at a plan's instant.
type reader func(key string) (core.Item, bool, error)

// planFunc works out a conditional write of items of a container from the
// items as stored at now, read through read: the keys to remove and the
// items to write, or the error that answers the request (a 404, a 412). It
// runs outside the engine's lock, and again when what it read changed
// before the write.
type planFunc func(now time.Time, read reader) (remove []string, put []core.Item, err error)

// statusRetryWith is the service's status 449, Retry With.
const statusRetryWith = 449

// errStale says that an item a plan read changed before its write.
var errStale = errors.New("cosmos: an item changed between a write's plan and the write")

// errRetryWith is the service's 449 for a write that conflicted with others.
func errRetryWith() *apiError {
	return errorf(statusRetryWith, "Conflicting request to resource has been attempted. Retry to avoid conflicts.")
}

// change makes a conditional write of items of ct (a replace, upsert,
// patch or batch): plan decides from the items it reads, and what it
// decides is written only if each of them is the same version (the same
// ETag, or still absent) at the engine's instant of the write, in one
// core.Engine.Change; else it is planned again on what is stored then. So
// a document that expires between the plan and the write is gone at the
// write: a replace of it answers 404 rather than writing it anew (CO-6).
// The costly work (JSON, new _rids) is in plan, outside the engine's lock;
// the lock is held only to compare ETags. It returns the items written and
// the commit to wait for.
func (s *Server) change(ct *container, plan planFunc) ([]core.Item, *core.Commit, error) {
	for range maxChangeAttempts {
		now := s.now()
		seen := map[string]string{} // key: the ETag read, "" when absent
		read := func(key string) (core.Item, bool, error) {
			it, ok, err := s.cfg.Engine.Get(now, ct.key, key)
			if err != nil {
				return core.Item{}, false, err
			}
			if _, again := seen[key]; !again {
				seen[key] = itemETag(it, ok)
			}
			return it, ok, nil
		}
		remove, put, err := plan(now, read)
		if err != nil {
			return nil, nil, err
		}
		if s.beforeChange != nil {
			s.beforeChange()
		}
		out, commit, err := s.cfg.Engine.Change(now, ct.key, func(cur func(string) (core.Item, bool)) ([]string, []core.Item, error) {
			for key, etag := range seen {
				if it, ok := cur(key); itemETag(it, ok) != etag {
					return nil, nil, errStale
				}
			}
			return remove, put, nil
		})
		if err != errStale {
			return out, commit, err
		}
	}
	return nil, nil, errRetryWith()
}

// itemETag returns the ETag of a stored item, "" when there is none.
func itemETag(it core.Item, ok bool) string {
	if !ok {
		return ""
	}
	etag, _ := splitMeta(it.Meta)
	return etag
}

// stored returns the item of key as read, for a write over it, and its
// _rid: a 404 when there is none, a 412 when its etag does not match
// ifMatchETag.
func stored(read reader, key, ifMatchETag string) (core.Item, string, error) {
	old, ok, err := read(key)
	if err != nil {
		return core.Item{}, "", err
	}
	if !ok {
		return core.Item{}, "", errItemNotFound()
	}
	oldETag, rid := splitMeta(old.Meta)
	if !ifMatch(ifMatchETag, oldETag) {
		return core.Item{}, "", errPrecondition()
	}
	return old, rid, nil
}

// removeItem deletes item key of ct, at one instant with its checks: a 404
// when it is not there (or has expired, CO-6), a 412 when ifMatchETag is
// set and is not its ETag. It returns the size of the item deleted.
func (s *Server) removeItem(ct *container, key, ifMatchETag string) (int, *core.Commit, error) {
	size := 0
	_, commit, err := s.cfg.Engine.Change(s.now(), ct.key, func(cur func(string) (core.Item, bool)) ([]string, []core.Item, error) {
		it, ok := cur(key)
		if !ok {
			return nil, nil, errItemNotFound()
		}
		if !ifMatch(ifMatchETag, itemETag(it, ok)) {
			return nil, nil, errPrecondition()
		}
		size = len(it.Body)
		return []string{key}, nil, nil
	})
	return size, commit, err
}

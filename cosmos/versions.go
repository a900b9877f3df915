package cosmos

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// The change feed's all-versions-and-deletes mode (A-IM: Full-Fidelity
// Feed) lists every change of a container's documents in the order they
// happened: each create and replace with the version it wrote, and each
// delete, a client's or an expiry's (metadata.timeToLiveExpired), with the
// id and partition key of what went. The engine tells the front-end of
// each change as it makes it (core.ProtocolHooks.ItemChanged, inside its
// lock); the front-end keeps the versions in memory, at least the latest
// maxVersions of each container (docs/cosmos.md says so). So a read sees
// every change whose engine call returned before it.
//
// A version's position in its container's log is the feed's continuation
// (the response's ETag): a container's positions start above a base taken
// from the clock when lapse first saw the container (and above every
// position this run gave out), so a continuation of an earlier run of
// lapse is older than anything kept and answers the service's 400 for
// changes past retention, as does one older than the versions kept.

// maxVersions is how many versions of a container the log keeps at least,
// unless they are more than maxVersionBytes; it drops the oldest once it
// holds a quarter more, down to maxVersions and three quarters of
// maxVersionBytes. The bytes bound keeps a container of large documents
// from holding thousands of them in memory for a mode few clients read.
const (
	maxVersions     = 10000
	maxVersionBytes = 16 << 20
)

// versionMetaBytes is about what a row of the feed adds to its document
// (its metadata), for the size of a page.
const versionMetaBytes = 160

// Operation types of the all-versions-and-deletes feed (metadata.operationType).
const (
	opCreate  = "create"
	opReplace = "replace"
	opDelete  = "delete"
)

// version is one change of a document, as the feed lists it.
type version struct {
	pos     uint64 // its place in the container's log
	op      string
	group   string // the canonical partition key
	id      string
	body    []byte // the document written, as the engine keeps it; nil for a delete
	seq     uint64 // its _lsn, which render adds
	lsn     uint64
	prevLSN uint64 // the LSN of the version it follows, 0 for a create
	crts    int64  // when it happened, in Unix seconds
	expired bool   // a delete by the document's TTL (CO-6)
}

// versionLog is the versions of one container, oldest first.
type versionLog struct {
	base  uint64 // every position is above it
	next  uint64 // the position of the next version
	recs  []version
	bytes int // of the documents in recs
}

// floor is the last position whose successors are all kept: a read after
// it misses nothing.
func (l *versionLog) floor() uint64 {
	if len(l.recs) == 0 {
		return l.next - 1
	}
	return l.recs[0].pos - 1
}

// versionLogs holds the version logs of the containers. Its lock is a leaf:
// nothing is called while it is held.
type versionLogs struct {
	mu   lockorder.Mutex
	logs map[core.EntityKey]*versionLog
	// high is the highest position any log has used: a new log starts
	// above it, so that no continuation of a container deleted and made
	// again reads as one of the new container's, even on a frozen clock.
	high uint64
}

// logOf returns k's log, made with positions above base (and above every
// position given so far) when it has none, with v.mu held.
func (v *versionLogs) logOf(k core.EntityKey, base uint64) *versionLog {
	if v.logs == nil {
		v.logs = map[core.EntityKey]*versionLog{}
	}
	l := v.logs[k]
	if l == nil {
		base = max(base, v.high)
		v.high = base
		l = &versionLog{base: base, next: base + 1}
		v.logs[k] = l
	}
	return l
}

// add appends rec to k's log.
func (v *versionLogs) add(k core.EntityKey, base uint64, rec version) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l := v.logOf(k, base)
	rec.pos = l.next
	l.next++
	v.high = max(v.high, rec.pos)
	l.recs = append(l.recs, rec)
	l.bytes += len(rec.body)
	if len(l.recs) > maxVersions+maxVersions/4 || l.bytes > maxVersionBytes {
		drop := max(len(l.recs)-maxVersions, 0)
		for _, r := range l.recs[:drop] {
			l.bytes -= len(r.body)
		}
		for ; drop < len(l.recs)-1 && l.bytes > maxVersionBytes*3/4; drop++ {
			l.bytes -= len(l.recs[drop].body)
		}
		clear(l.recs[:drop])
		l.recs = append(l.recs[:0], l.recs[drop:]...)
	}
}

// forget drops k's log: its container is gone.
func (v *versionLogs) forget(k core.EntityKey) {
	v.mu.Lock()
	delete(v.logs, k)
	v.mu.Unlock()
}

// forgetVersions drops the version logs of containers ks, which the engine
// has deleted: a container made anew under a name starts a log of its own.
func (s *Server) forgetVersions(ks ...core.EntityKey) {
	for _, k := range ks {
		s.versions.forget(k)
	}
}

// errStartNotSupported is the service's answer to a read of the
// all-versions-and-deletes feed from the beginning or from a point in
// time: it only starts from now or from a continuation.
func errStartNotSupported() *apiError {
	return errorf(http.StatusBadRequest, "Start from beginning is not supported with 'All Versions and Deletes' mode.")
}

// errPastRetention is the service's 400 for a continuation older than the
// changes it keeps for the all-versions-and-deletes feed.
func errPastRetention() *apiError {
	return errorf(http.StatusBadRequest, "The continuation is older than the retention of the 'All Versions and Deletes' change feed: the changes after it are no longer kept.")
}

// since returns up to size versions of k's log (0: as many as fit in
// maxPageBytes) after the position inm names ("*": now) in scope sc (one
// partition key, a prefix of one, a range of them, or all), and the
// position the next read goes on from.
func (v *versionLogs) since(k core.EntityKey, base uint64, inm string, sc scope, size int) ([]version, uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l := v.logOf(k, base)
	end := l.next - 1
	after := end
	if inm != "*" {
		n, err := strconv.ParseUint(inm, 10, 64)
		if err != nil || n > end {
			return nil, 0, errorf(http.StatusBadRequest, "Invalid Continuation Token")
		}
		if n < l.floor() {
			return nil, 0, errPastRetention()
		}
		after = n
	}
	var out []version
	bytes := 0
	through := end
	for i := int(after + 1 - l.floor() - 1); i < len(l.recs); i++ {
		r := l.recs[i]
		if !sc.all && !sc.partial && r.group != sc.group || !sc.holds(r.group) {
			continue
		}
		if pageFull(size, len(out), bytes, len(r.body)+versionMetaBytes) {
			through = out[len(out)-1].pos
			break
		}
		out = append(out, r)
		bytes += len(r.body) + versionMetaBytes
	}
	return out, through, nil
}

// itemChanged is the engine's ItemChanged hook: it keeps the version. It
// runs inside the engine's lock, so it takes no lock but the logs' own and
// reads the clock from the change, not from the engine.
func (s *Server) itemChanged(k core.EntityKey, ch core.ItemChange) {
	if isAccessEntity(k.Name) {
		return // a permission's tokens are no documents
	}
	rec := version{crts: ch.At.Unix(), lsn: ch.LastSeq}
	it := ch.New
	switch {
	case ch.New != nil && ch.Old == nil:
		rec.op = opCreate
	case ch.New != nil:
		rec.op, rec.prevLSN = opReplace, ch.Old.Seq
	default:
		it = ch.Old
		// A removal takes no LSN in core: it has the one the container's
		// next write takes, which a client's delete takes at once (bumpLSN).
		rec.op, rec.prevLSN, rec.expired, rec.lsn = opDelete, ch.Old.Seq, ch.Expired, ch.LastSeq+1
	}
	rec.group = it.Group
	rec.id = strings.TrimPrefix(it.Key, it.Group)
	if ch.New != nil {
		// The engine's body, never changed once stored: no copy on every
		// write for a feed few clients read; render adds the _lsn.
		rec.body, rec.seq = ch.New.Body, ch.New.Seq
	}
	s.versions.add(k, versionBase(ch.At), rec)
}

// versionBase is the base of a container log made at t: the clock's
// milliseconds times a thousand, above what an earlier run of lapse gave
// out unless it kept over a thousand versions a millisecond.
func versionBase(t time.Time) uint64 {
	return uint64(t.UnixMilli()) * 1000
}

// allVersionsFeed answers a read of ct's change feed in the
// all-versions-and-deletes mode: the changes after the point If-None-Match
// names, a continuation this feed gave or "*" for from now on, scoped to a
// partition key or feed range as the latest-version mode is. Nothing new
// is a 304. The response's ETag is where the next read goes on from.
func (s *Server) allVersionsFeed(c *gin.Context, ct *container) {
	size, err := pageSize(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	sc, err := s.itemScope(c, ct, nil)
	if err != nil {
		s.writeError(c, err)
		return
	}
	inm := strings.Trim(rqIfNoneMatch.of(c), `"`)
	if inm == "" {
		s.writeError(c, errStartNotSupported())
		return
	}
	recs, through, err := s.versions.since(ct.key, versionBase(s.now()), inm, sc, size)
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.itemHeaders(c, ct)
	c.Writer.Header().Set("etag", `"`+itoa(through)+`"`)
	if len(recs) == 0 {
		c.Status(http.StatusNotModified)
		c.Writer.WriteHeaderNow()
		return
	}
	var paths []string
	if def := ct.meta.PartitionKey; def != nil {
		paths = def.Paths
	}
	rows := make([][]byte, len(recs))
	for i := range recs {
		rows[i] = recs[i].render(paths)
	}
	writeFeed(c, ct.rid(), "Documents", rows, "")
}

// render writes the version as the feed lists it: {"current": the document
// written ({} for a delete), "metadata": {...}}. A delete's metadata names
// the id and partition key (by path) of what went; like the service's
// default, it has no "previous" image.
func (r *version) render(paths []string) []byte {
	b := make([]byte, 0, len(r.body)+200)
	b = append(b, `{"current":`...)
	if r.body != nil {
		b = appendWithLSN(b, r.body, r.seq)
	} else {
		b = append(b, "{}"...)
	}
	b = append(b, `,"metadata":{"operationType":"`...)
	b = append(b, r.op...)
	b = append(b, `","lsn":`...)
	b = strconv.AppendUint(b, r.lsn, 10)
	b = append(b, `,"crts":`...)
	b = strconv.AppendInt(b, r.crts, 10)
	if r.op != opCreate {
		b = append(b, `,"previousImageLSN":`...)
		b = strconv.AppendUint(b, r.prevLSN, 10)
	}
	if r.op == opDelete {
		b = append(b, `,"timeToLiveExpired":`...)
		b = strconv.AppendBool(b, r.expired)
		b = append(b, `,"id":`...)
		b = append(b, jsonString(r.id)...)
		b = append(b, `,"partitionKey":{`...)
		var vals []json.RawMessage
		json.Unmarshal([]byte(r.group), &vals) // a canonical key is a JSON array
		n := 0
		for i, v := range vals {
			if i >= len(paths) || string(v) == "{}" {
				continue // no path, or the document had no value there
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, jsonString(strings.TrimPrefix(paths[i], "/"))...)
			b = append(b, ':')
			b = append(b, v...)
		}
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

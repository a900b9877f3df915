package cosmos

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// readFeed answers GET .../docs: the read feed of a container (or of one
// partition), a page at a time, or its change feed when the request says
// A-IM: Incremental feed, or its all-versions-and-deletes change feed for
// A-IM: Full-Fidelity Feed (versions.go). Expired items are in neither the
// read feed nor the latest-version change feed (CO-6).
func (s *Server) readFeed(c *gin.Context) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	switch aim := rqAIM.of(c); {
	case strings.EqualFold(aim, "Incremental feed"):
		s.changeFeed(c, ct)
		return
	case strings.EqualFold(aim, "Full-Fidelity Feed"):
		s.allVersionsFeed(c, ct)
		return
	}
	size, err := pageSize(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	from, err := seqContinuation(rqContinuation.of(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	sc, err := s.itemScope(c, ct, nil)
	if err != nil {
		s.writeError(c, err)
		return
	}
	rows, next := s.page(ct, sc, from, size)
	continuation := ""
	if next > 0 {
		continuation = seqPrefix + itoa(next)
	}
	s.itemHeaders(c, ct)
	writeFeed(c, ct.rid(), "Documents", rows, continuation)
}

// seqPrefix starts the continuation of a read feed: the Seq to go on from,
// which later writes do not shift.
const seqPrefix = "lapse-seq:"

// seqContinuation reads a read feed's continuation.
func seqContinuation(h string) (uint64, error) {
	if h == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(h, seqPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(h, seqPrefix) {
		return 0, errorf(http.StatusBadRequest, "Invalid Continuation Token")
	}
	return n, nil
}

// page returns up to size items (0: as many as fit in maxPageBytes) of
// scope sc with Seq >= from, and the Seq to go on from, 0 when there is no
// more.
func (s *Server) page(ct *container, sc scope, from uint64, size int) (rows [][]byte, next uint64) {
	bytes := 0
	take := func(it *core.Item) bool {
		if it.Seq < from {
			return true
		}
		if pageFull(size, len(rows), bytes, len(it.Body)) {
			next = it.Seq
			return false
		}
		if !sc.holds(it.Group) {
			return true
		}
		rows = append(rows, it.Body)
		bytes += len(it.Body)
		return true
	}
	now := s.now()
	switch {
	case sc.all || sc.partial:
		s.cfg.Engine.Scan(now, ct.key, from, take)
	default:
		s.cfg.Engine.ScanGroup(now, ct.key, sc.group, take)
	}
	return rows, next
}

// inPrefix reports whether the canonical key group is under prefix.
func inPrefix(group, prefix string) bool {
	if !strings.HasPrefix(group, prefix) {
		return false
	}
	return prefix == "[" || group[len(prefix)] == ',' || group[len(prefix)] == ']'
}

// changeFeed answers a change feed read (latest version): the items
// written after the point If-None-Match names (an ETag this feed gave, the
// container's last sequence number; "*" for from now on; none for from the
// beginning), or modified since If-Modified-Since, in the order of their
// last write, each once. Nothing new is a 304. The response's ETag is where
// the next read goes on from.
func (s *Server) changeFeed(c *gin.Context, ct *container) {
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
	last := lastSeq(s, ct.key)
	var after uint64
	switch inm := strings.Trim(rqIfNoneMatch.of(c), `"`); inm {
	case "":
	case "*":
		after = last
	default:
		n, err := strconv.ParseUint(inm, 10, 64)
		if err != nil {
			s.writeError(c, errorf(http.StatusBadRequest, "Invalid Continuation Token"))
			return
		}
		after = n
	}
	var since time.Time
	if h := rqIfModifiedSince.of(c); h != "" {
		if t, err := http.ParseTime(h); err == nil {
			since = t
		}
	}
	var rows [][]byte
	var through uint64
	bytes := 0
	take := func(it *core.Item) bool {
		if it.Seq <= after || !sc.holds(it.Group) || !since.IsZero() && it.ModifiedAt.Before(since) {
			return true
		}
		if pageFull(size, len(rows), bytes, len(it.Body)) {
			return false
		}
		rows = append(rows, withLSN(it.Body, it.Seq))
		bytes += len(it.Body)
		through = it.Seq
		return true
	}
	now := s.now()
	switch {
	case sc.all || sc.partial:
		s.cfg.Engine.Scan(now, ct.key, after+1, take)
	default:
		s.cfg.Engine.ScanGroup(now, ct.key, sc.group, take)
	}
	s.itemHeaders(c, ct)
	if len(rows) == 0 {
		if after < last {
			after = last
		}
		c.Writer.Header().Set("etag", `"`+itoa(after)+`"`)
		c.Status(http.StatusNotModified)
		c.Writer.WriteHeaderNow()
		return
	}
	c.Writer.Header().Set("etag", `"`+itoa(through)+`"`)
	writeFeed(c, ct.rid(), "Documents", rows, "")
}

// withLSN returns document body with its _lsn, the LSN of the write that
// made this version of it (its core Seq), as the change feed's documents
// carry it (issue 26.3): the SDKs' change feed processors order and
// resume by it.
func withLSN(body []byte, lsn uint64) []byte {
	if bytes.LastIndexByte(body, '}') < 0 {
		return body
	}
	return appendWithLSN(make([]byte, 0, len(body)+24), body, lsn)
}

// appendWithLSN appends body to dst with "_lsn": lsn as its last member,
// as withLSN returns it.
func appendWithLSN(dst, body []byte, lsn uint64) []byte {
	end := bytes.LastIndexByte(body, '}')
	if end < 0 {
		return append(dst, body...)
	}
	dst = append(dst, body[:end]...)
	if len(bytes.TrimSpace(body[1:end])) > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_lsn":`...)
	dst = strconv.AppendUint(dst, lsn, 10)
	return append(dst, body[end:]...)
}

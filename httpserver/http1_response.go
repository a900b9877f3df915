package httpserver

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// http1BufferLimit is how much of an answer's body is held back so that
// the answer goes out with a Content-Length, in one write; past it, or
// once the handler flushes, the body goes out in chunks as it comes.
const http1BufferLimit = 256 << 10

// sniffLen is how many bytes http.DetectContentType reads.
const sniffLen = 512

// http1Response is the http.ResponseWriter of one request of an
// http1Conn; it is also an http.Flusher, and takes the read and write
// deadlines of http.ResponseController.
type http1Response struct {
	c      *http1Conn
	req    *http.Request
	header http.Header
	status int
	// wroteHeader: the status is set; sent: the status line and headers
	// are written to the connection's buffer.
	wroteHeader, sent bool
	// chunked: the body goes out in chunks (sent, and no Content-Length).
	chunked bool
	// contentLength is the handler's Content-Length, -1 without one.
	contentLength int64
	written       int64
	buf           []byte
	isHEAD        bool
	closeAfter    bool // the connection closes after this answer
	deadline      bool // the handler set a read deadline
}

func (w *http1Response) Header() http.Header { return w.header }

// WriteHeader sets the status, as net/http's does: a second call is
// ignored, a 1xx status is not sent (none of lapse's APIs sends one).
func (w *http1Response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHeader || code < 200 {
		return
	}
	w.wroteHeader = true
	w.status = code
	if cl := w.header.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			w.header.Del("Content-Length")
		} else {
			w.contentLength = n
		}
	}
}

func (w *http1Response) Write(p []byte) (int, error) { return w.write(len(p), p, "") }

func (w *http1Response) WriteString(s string) (int, error) { return w.write(len(s), nil, s) }

// write writes p, or s when p is nil, of n bytes.
func (w *http1Response) write(n int, p []byte, s string) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if n == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.contentLength >= 0 && w.written+int64(n) > w.contentLength {
		return 0, http.ErrContentLength
	}
	w.written += int64(n)
	if w.isHEAD {
		// Counted for the Content-Length, never sent; the first bytes
		// are kept for the Content-Type.
		if k := sniffLen - len(w.buf); k > 0 {
			if p != nil {
				w.buf = append(w.buf, p[:min(k, len(p))]...)
			} else {
				w.buf = append(w.buf, s[:min(k, len(s))]...)
			}
		}
		return n, nil
	}
	if !w.sent {
		if p != nil {
			w.buf = append(w.buf, p...)
		} else {
			w.buf = append(w.buf, s...)
		}
		if len(w.buf) > http1BufferLimit {
			return n, w.send()
		}
		return n, nil
	}
	if err := w.writeOut(n, p, s); err != nil {
		return 0, err
	}
	return n, nil
}

// writeOut writes p, or s when p is nil, of n bytes, to the connection's
// buffer after the headers, as a chunk when the body is chunked.
func (w *http1Response) writeOut(n int, p []byte, s string) error {
	bw := w.c.bw
	if w.chunked {
		bw.WriteString(strconv.FormatInt(int64(n), 16))
		bw.WriteString("\r\n")
	}
	if p != nil {
		bw.Write(p)
	} else {
		bw.WriteString(s)
	}
	if w.chunked {
		bw.WriteString("\r\n")
	}
	_, err := bw.Write(nil) // the buffer's first error, if any
	return err
}

// send writes the status line, the headers and the body held so far; the
// rest of the body goes out as it comes, in chunks unless the handler gave
// its length.
func (w *http1Response) send() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.contentLength < 0 && bodyAllowed(w.status) && !w.isHEAD {
		if w.req.ProtoAtLeast(1, 1) {
			w.chunked = true
		} else {
			w.closeAfter = true // an HTTP/1.0 body ends with the connection
		}
	}
	w.writeHead(-1)
	w.sent = true
	held := w.buf
	w.buf = w.buf[:0]
	if len(held) == 0 {
		_, err := w.c.bw.Write(nil)
		return err
	}
	return w.writeOut(len(held), held, "")
}

// writeHead writes the status line and the headers, with a Content-Length
// of length unless it is negative.
func (w *http1Response) writeHead(length int64) {
	bw, h := w.c.bw, w.header
	if w.req.ProtoAtLeast(1, 1) {
		bw.WriteString("HTTP/1.1 ")
	} else {
		bw.WriteString("HTTP/1.0 ")
	}
	bw.WriteString(strconv.Itoa(w.status))
	bw.WriteByte(' ')
	bw.WriteString(http.StatusText(w.status))
	bw.WriteString("\r\n")
	if _, ok := h["Date"]; !ok {
		bw.WriteString("Date: ")
		bw.WriteString(w.c.srv.dateHeader())
		bw.WriteString("\r\n")
	}
	// As net/http, an answer without a Content-Type gets the one its
	// first bytes suggest.
	if _, ok := h["Content-Type"]; !ok && h.Get("Content-Encoding") == "" && bodyAllowed(w.status) && len(w.buf) > 0 {
		bw.WriteString("Content-Type: ")
		bw.WriteString(http.DetectContentType(w.buf))
		bw.WriteString("\r\n")
	}
	if length >= 0 {
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.FormatInt(length, 10))
		bw.WriteString("\r\n")
	}
	if w.chunked {
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	switch {
	case hasToken(h.Get("Connection"), "close"):
		w.closeAfter = true
	case w.req.ProtoAtLeast(1, 1):
		if w.closeAfter {
			bw.WriteString("Connection: close\r\n")
		}
	case w.closeAfter:
	case length >= 0 || w.contentLength >= 0:
		// An HTTP/1.0 client that asked to keep the connection: it can
		// when it knows where the body ends.
		bw.WriteString("Connection: keep-alive\r\n")
	default:
		w.closeAfter = true
	}
	writeHeaders(bw, h)
	bw.WriteString("\r\n")
}

// writeHeaders writes h as http.Header.Write does (names that are not
// valid dropped, a value's line breaks made spaces and its ends trimmed)
// but in the map's order: no client reads meaning into the order, and
// Header.Write's sorting of the names was most of its 5% of lapse's CPU
// in point reads (pprof).
func writeHeaders(bw *bufio.Writer, h http.Header) {
	for k, vv := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		for _, v := range vv {
			if strings.ContainsAny(v, "\r\n") {
				v = strings.NewReplacer("\n", " ", "\r", " ").Replace(v)
			}
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(strings.Trim(v, " \t"))
			bw.WriteString("\r\n")
		}
	}
}

// finish writes what is left of the answer and flushes it.
func (w *http1Response) finish() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	bw := w.c.bw
	switch {
	case !w.sent:
		length := int64(-1)
		if w.contentLength < 0 && bodyAllowed(w.status) && (!w.isHEAD || w.written > 0) {
			length = w.written
		}
		w.writeHead(length)
		w.sent = true
		if !w.isHEAD {
			bw.Write(w.buf)
		}
	case w.chunked:
		bw.WriteString("0\r\n\r\n")
	}
	if w.contentLength >= 0 && w.written < w.contentLength && !w.isHEAD {
		// The client waits for bytes the handler never wrote.
		w.closeAfter = true
	}
	if w.deadline {
		w.c.rwc.SetReadDeadline(time.Time{})
	}
	return bw.Flush()
}

// Flush sends what the handler wrote so far (http.Flusher).
func (w *http1Response) Flush() { w.FlushError() }

// FlushError is Flush with its error, for http.ResponseController.
func (w *http1Response) FlushError() error {
	if !w.sent {
		if err := w.send(); err != nil {
			return err
		}
	}
	return w.c.bw.Flush()
}

// SetReadDeadline sets the connection's read deadline while the request is
// served (http.ResponseController); it is lifted after the answer.
func (w *http1Response) SetReadDeadline(t time.Time) error {
	w.deadline = true
	return w.c.rwc.SetReadDeadline(t)
}

// SetWriteDeadline sets the connection's write deadline
// (http.ResponseController).
func (w *http1Response) SetWriteDeadline(t time.Time) error {
	return w.c.rwc.SetWriteDeadline(t)
}

// bodyAllowed says whether an answer of status code has a body.
func bodyAllowed(code int) bool {
	return code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified
}

// hasToken says whether the comma-separated list v holds token, in any
// case.
func hasToken(v, token string) bool {
	for v != "" {
		var t string
		t, v, _ = strings.Cut(v, ",")
		if strings.EqualFold(strings.TrimSpace(t), token) {
			return true
		}
	}
	return false
}

// http1Body is a request's body as its handler reads it: it answers a
// client that awaits "100 Continue" at the first read, and keeps how the
// reading ended, for the connection to know whether it can serve another
// request.
type http1Body struct {
	rc     io.ReadCloser
	c      *http1Conn
	expect bool // the client awaits 100 Continue before it sends the body
	eof    bool
	err    error
	closed bool
}

func (b *http1Body) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.expect {
		b.expect = false
		b.c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if err := b.c.bw.Flush(); err != nil {
			b.err = err
		}
	}
	switch {
	case b.err != nil:
		return 0, b.err
	case b.eof:
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
		b.c.readWithin(0)
	} else if err != nil {
		b.err = err
	}
	return n, err
}

// Close ends the handler's reading; what is left is dropped after the
// handler (finish), as net/http does.
func (b *http1Body) Close() error {
	b.closed = true
	return nil
}

// finish reads and drops up to http1DiscardLimit bytes the handler left of
// the body; false when the connection cannot serve another request: the
// body failed to read, is longer, or was never asked for by a client that
// awaits 100 Continue.
func (b *http1Body) finish() bool {
	switch {
	case b.eof:
		return true
	case b.err != nil, b.expect:
		return false
	}
	_, err := io.CopyN(io.Discard, b.rc, http1DiscardLimit+1)
	return err == io.EOF
}

package rabbitmq

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// frameWriter is a connection's outgoing side: callers append frames to a
// buffer under its lock and one goroutine writes the buffer out, so that
// frames written while the socket is busy go out together in one write.
// Writers wait while more than highWater bytes are waiting, which passes a
// slow client's back-pressure on to whoever produces for it.
type frameWriter struct {
	nc     net.Conn
	mu     lockorder.Mutex
	cond   sync.Cond
	buf    []byte
	spare  []byte
	closed bool // no more frames are taken
	// writing is set while a caller of writeNow writes on its own
	// goroutine; run waits for it to end.
	writing bool
	err     error
	wake    chan struct{}
	done    chan struct{}
	written atomic.Uint64 // flushes, for heartbeats
	octets  atomic.Uint64 // octets written, for the management API
}

const highWater = 1 << 20

func newFrameWriter(nc net.Conn) *frameWriter {
	w := &frameWriter{nc: nc, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.cond.L = &w.mu
	return w
}

// write appends frames with fn; it reports false once the writer is closed.
func (w *frameWriter) write(fn func([]byte) []byte) bool {
	b, ok := w.begin()
	if !ok {
		return false
	}
	w.end(fn(b))
	return true
}

// begin takes the writer's lock, waiting while too much is buffered, and
// returns the buffer to append frames to, which end hands back; ok is false,
// and the lock not held, once the writer is closed. Unlike write it makes
// no closure, for the delivery path.
func (w *frameWriter) begin() (buf []byte, ok bool) {
	w.mu.Lock()
	for len(w.buf) > highWater && !w.closed {
		w.cond.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return nil, false
	}
	return w.buf, true
}

// end stores the buffer begin returned, with frames appended, releases the
// lock and wakes the writing goroutine.
func (w *frameWriter) end(buf []byte) {
	w.buf = buf
	w.mu.Unlock()
	w.signal()
}

// writeNow is write for a goroutine that may block on the connection
// (the confirmer, never one holding the engine's lock): when nothing is
// buffered nor being written, it writes its frames itself, rather than
// waking the writing goroutine and leaving the write to it, one hand-off
// less on the way of a publisher confirm (issue 17: a publisher waiting
// for each confirm). Else it is write.
func (w *frameWriter) writeNow(fn func([]byte) []byte) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	if len(w.buf) > 0 || w.writing {
		w.mu.Unlock()
		return w.write(fn)
	}
	// The empty buffer is this call's now: frames appended meanwhile go
	// to a new one.
	buf := fn(w.buf[:0])
	w.buf = nil
	w.writing = true
	w.mu.Unlock()
	_, err := w.nc.Write(buf)
	w.mu.Lock()
	w.writing = false
	if err != nil {
		w.err, w.closed = err, true
		w.buf = nil
	} else {
		w.written.Add(1)
		w.octets.Add(uint64(len(buf)))
		if w.buf == nil && cap(buf) <= 4*highWater {
			w.buf = buf[:0]
		}
	}
	w.cond.Broadcast()
	more := len(w.buf) > 0 || w.closed
	w.mu.Unlock()
	if more {
		w.signal()
	}
	return err == nil
}

// run writes until close; it returns after the last frames are out.
func (w *frameWriter) run() {
	defer close(w.done)
	for {
		<-w.wake
		w.mu.Lock()
		for w.writing {
			w.cond.Wait()
		}
		buf := w.buf
		w.buf = w.spare[:0]
		closed := w.closed
		w.writing = len(buf) > 0 // writeNow waits for it
		w.mu.Unlock()
		if len(buf) > 0 {
			if _, err := w.nc.Write(buf); err != nil {
				w.mu.Lock()
				w.err, w.closed, w.writing = err, true, false
				w.buf = nil
				w.cond.Broadcast()
				w.mu.Unlock()
				return
			}
			w.written.Add(1)
			w.octets.Add(uint64(len(buf)))
		}
		w.mu.Lock()
		w.writing = false
		if cap(buf) <= 4*highWater {
			w.spare = buf[:0]
		}
		w.cond.Broadcast()
		more := len(w.buf) > 0
		w.mu.Unlock()
		if closed && !more {
			return
		}
		if more || closed {
			w.signal()
		}
	}
}

// signal wakes the writing goroutine, unless it is woken already.
func (w *frameWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// close stops taking frames; run writes what is buffered and returns.
func (w *frameWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	w.signal()
}

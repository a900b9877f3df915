package servicebus

import (
	"io"
	"sync"
)

// readBufferSize is the read-ahead of a busy connection: one read from the
// socket takes many small frames.
const readBufferSize = 64 << 10

// waitBufferSize is what a connection waiting for its next frame reads
// into: a small frame (a flow, a disposition, a short message) arrives in
// it whole.
const waitBufferSize = 512

// readBuffers are the servers' read-ahead buffers, *[]byte of
// readBufferSize.
type readBuffers struct{ sync.Pool }

func (p *readBuffers) get() *[]byte {
	if b, ok := p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, readBufferSize)
	return &b
}

// connReader is a connection's buffered reader. Its read-ahead buffer comes
// from the server's pool and goes back as soon as it holds nothing unread,
// and wait reads into a small buffer of its own: a connection idle between
// frames holds no read-ahead (issue 25.8).
type connReader struct {
	rd     io.Reader
	pool   *readBuffers
	buf    *[]byte // the pooled buffer, nil when none is held
	unread []byte  // read from rd, not yet returned: in buf or in small
	small  [waitBufferSize]byte
}

// wait blocks until the peer has sent something, unless something read is
// yet to be returned, without holding a pooled buffer meanwhile. An error
// is returned once nothing is left to read before it.
func (r *connReader) wait() error {
	if len(r.unread) > 0 {
		return nil
	}
	r.release()
	n, err := r.rd.Read(r.small[:])
	r.unread = r.small[:n]
	if n > 0 {
		return nil // an error comes again with the next read
	}
	return err
}

// buffered is the number of bytes read from the socket and not yet
// returned.
func (r *connReader) buffered() int { return len(r.unread) }

// Read reads into p what is buffered, else from the socket: straight into
// p when p is at least as large as the read-ahead, else through a pooled
// buffer.
func (r *connReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(r.unread) == 0 {
		r.release()
		if len(p) >= readBufferSize {
			return r.rd.Read(p)
		}
		r.buf = r.pool.get()
		n, err := r.rd.Read(*r.buf)
		r.unread = (*r.buf)[:n]
		if n == 0 {
			r.release()
			return 0, err
		}
	}
	n := copy(p, r.unread)
	r.unread = r.unread[n:]
	return n, nil
}

// release gives the pooled buffer back; nothing in it is left unread.
func (r *connReader) release() {
	r.unread = nil
	if r.buf != nil {
		r.pool.Put(r.buf)
		r.buf = nil
	}
}

// Package watchconn tells a test when a write it waits for begins on a
// connection: with net.Pipe, whose writes wait for the reader, that is
// the moment a server is held in the write, a state a test of a close or
// of back-pressure needs to reach without sleeping.
package watchconn

import (
	"net"
	"sync/atomic"
)

// Conn is a connection that closes Began's channel when the first write
// that match accepts begins.
type Conn struct {
	net.Conn
	match func(b []byte) bool
	fired atomic.Bool
	began chan struct{}
}

// New watches c's writes for one that match accepts; a nil match accepts
// any write.
func New(c net.Conn, match func(b []byte) bool) *Conn {
	return &Conn{Conn: c, match: match, began: make(chan struct{})}
}

// Write tells of the write, if it is the one watched for, and writes b.
func (c *Conn) Write(b []byte) (int, error) {
	if (c.match == nil || c.match(b)) && c.fired.CompareAndSwap(false, true) {
		close(c.began)
	}
	return c.Conn.Write(b)
}

// Began is closed when the write watched for begins.
func (c *Conn) Began() <-chan struct{} { return c.began }

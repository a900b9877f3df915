package servicebus_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	gosync "sync"
	"testing"
	"time"

	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// tap is a TCP proxy in front of a fixture's listener that records the
// bytes each side of every connection writes, to look at the frames
// clients send and what the server answers.
type tap struct {
	tb     testing.TB
	ln     net.Listener
	target string
	wg     gosync.WaitGroup

	mu    gosync.Mutex
	conns []*tapConn
}

// tapConn is one proxied connection and what each side wrote.
type tapConn struct {
	client, server net.Conn
	pipes          gosync.WaitGroup // both directions' copies

	mu                     gosync.Mutex
	fromClient, fromServer bytes.Buffer
}

// MustTap starts a tap in front of f; it closes with the test.
func (f *fixture) MustTap(tb testing.TB) *tap {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	t := &tap{tb: tb, ln: ln, target: f.ln.Addr().String()}
	t.wg.Add(1)
	go t.accept()
	tb.Cleanup(t.close)
	return t
}

// Addr is the address clients dial.
func (t *tap) Addr() string { return t.ln.Addr().String() }

func (t *tap) accept() {
	defer t.wg.Done()
	for {
		cc, err := t.ln.Accept()
		if err != nil {
			return
		}
		sc, err := net.Dial("tcp", t.target)
		if err != nil {
			cc.Close()
			continue
		}
		tc := &tapConn{client: cc, server: sc}
		t.mu.Lock()
		t.conns = append(t.conns, tc)
		t.mu.Unlock()
		t.wg.Add(2)
		tc.pipes.Add(2)
		go t.pipe(tc, sc, cc, &tc.fromClient)
		go t.pipe(tc, cc, sc, &tc.fromServer)
	}
}

// pipe copies from src to dst, recording what passes before forwarding
// it, so that whatever a peer has read is already recorded.
func (t *tap) pipe(tc *tapConn, dst, src net.Conn, rec *bytes.Buffer) {
	defer t.wg.Done()
	defer tc.pipes.Done()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			tc.mu.Lock()
			rec.Write(buf[:n])
			tc.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	// one side ended: end the other
	dst.Close()
	src.Close()
}

func (t *tap) close() {
	t.ln.Close()
	t.mu.Lock()
	for _, tc := range t.conns {
		tc.client.Close()
		tc.server.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// waitClosed waits until every connection through the tap has ended, so
// that everything the clients wrote before closing is recorded.
func (t *tap) waitClosed() {
	t.tb.Helper()
	t.mu.Lock()
	conns := append([]*tapConn(nil), t.conns...)
	t.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, tc := range conns {
			tc.pipes.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.tb.Fatal("connections through the tap are still open")
	}
}

// clientFrames returns the frames clients sent, each with its 8-byte
// frame header, connection by connection.
func (t *tap) clientFrames() [][][]byte { return t.frames(true) }

// serverFrames returns the frames the server sent.
func (t *tap) serverFrames() [][][]byte { return t.frames(false) }

func (t *tap) frames(fromClient bool) [][][]byte {
	t.tb.Helper()
	t.mu.Lock()
	conns := append([]*tapConn(nil), t.conns...)
	t.mu.Unlock()
	var out [][][]byte
	for _, tc := range conns {
		tc.mu.Lock()
		b := tc.fromServer.Bytes()
		if fromClient {
			b = tc.fromClient.Bytes()
		}
		fs, err := splitFrames(bytes.Clone(b))
		tc.mu.Unlock()
		if err != nil {
			t.tb.Fatal(err)
		}
		out = append(out, fs)
	}
	return out
}

// performatives decodes the frames the server sent with lapse's codec.
func (t *tap) serverPerformatives() []codec.Performative {
	t.tb.Helper()
	var out []codec.Performative
	for _, conn := range t.serverFrames() {
		for _, b := range conn {
			f, _, err := codec.ParseFrame(b, 1<<20)
			if err != nil {
				t.tb.Fatalf("a frame the server sent does not decode: %v", err)
			}
			if f.Body != nil {
				out = append(out, f.Body)
			}
		}
	}
	return out
}

// splitFrames cuts a byte stream of one direction of a connection into
// frames, skipping the 8-byte protocol headers (AMQP 0 1 0 0 and SASL's
// AMQP 3 1 0 0). An incomplete frame at the end is left out.
func splitFrames(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) >= 8 {
		if string(b[:4]) == "AMQP" {
			b = b[8:]
			continue
		}
		size := binary.BigEndian.Uint32(b)
		if size < 8 {
			return nil, fmt.Errorf("a frame of %d bytes", size)
		}
		if uint64(size) > uint64(len(b)) {
			break
		}
		out = append(out, b[:size:size])
		b = b[size:]
	}
	return out, nil
}

// performativesOf picks the performatives of type T out of ps.
func performativesOf[T codec.Performative](ps []codec.Performative) []T {
	var out []T
	for _, p := range ps {
		if x, ok := p.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

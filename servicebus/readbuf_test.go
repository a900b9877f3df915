package servicebus

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// chunkReader returns one chunk per read at most, then io.EOF.
type chunkReader struct{ chunks [][]byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// A connReader gives the stream back whole and in order, whatever the
// sizes of the reads from the socket and of the reads made of it.
func TestConnReaderReadsTheStream(t *testing.T) {
	stream := make([]byte, 300_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range stream {
		stream[i] = byte(rng.Uint32())
	}
	sizes := []int{8, 3, 500, 100_000, 1, 70_000, 512, 513}
	for name, rd := range map[string]func() io.Reader{
		"Whole":   func() io.Reader { return bytes.NewReader(stream) },
		"OneByte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"Half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
		"DataErr": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) },
		"Chunks":  func() io.Reader { return &chunkReader{chunks: [][]byte{stream[:7], stream[7:9000], stream[9000:]}} },
	} {
		t.Run(name, func(t *testing.T) {
			r := &connReader{rd: rd(), pool: &readBuffers{}}
			var got []byte
			for i := 0; ; i++ {
				if err := r.wait(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				p := make([]byte, sizes[i%len(sizes)])
				n, err := io.ReadFull(r, p)
				got = append(got, p[:n]...)
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, stream) {
				t.Errorf("read %d bytes, not the %d of the stream", len(got), len(stream))
			}
		})
	}
}

// issue 25.8: a connReader holds a pooled buffer only while bytes read
// into it are unread: waiting for the next frame, it holds none.
func TestConnReaderWaitsWithoutAPooledBuffer(t *testing.T) {
	flow := bytes.Repeat([]byte{1}, 30)
	transfer := bytes.Repeat([]byte{2}, 10_000)
	r := &connReader{rd: &chunkReader{chunks: [][]byte{flow, transfer}}, pool: &readBuffers{}}
	mustRead := func(n int) {
		t.Helper()
		if _, err := io.ReadFull(r, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	mustRead(len(flow))
	if r.buf != nil {
		t.Errorf("a pooled buffer for a frame that the wait read whole")
	}
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	mustRead(5_000)
	if r.buf == nil || r.buffered() == 0 {
		t.Fatalf("%d bytes buffered, pooled buffer %v: want the rest of the transfer in a pooled one", r.buffered(), r.buf != nil)
	}
	if err := r.wait(); err != nil || r.buf == nil {
		t.Fatalf("wait with bytes unread: %v, pooled buffer %v; want nil, the buffer kept", err, r.buf != nil)
	}
	mustRead(5_000)
	if err := r.wait(); err != io.EOF {
		t.Fatalf("wait at the end: %v, want io.EOF", err)
	}
	if r.buf != nil {
		t.Errorf("waiting with a pooled buffer")
	}
}

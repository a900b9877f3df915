package watchconn

import (
	"io"
	"net"
	"testing"
)

// Began is closed by the first write match accepts, not by those before.
func TestBeganWaitsForTheWriteWatchedFor(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b)
	w := New(a, func(p []byte) bool { return len(p) > 3 })
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Began():
		t.Fatal("a write match refuses was told of")
	default:
	}
	if _, err := w.Write([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	<-w.Began()
	if _, err := w.Write([]byte("abcde")); err != nil { // closes nothing twice
		t.Fatal(err)
	}
}

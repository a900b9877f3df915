package rabbitmq

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// issue 17: writeNow writes on its caller's goroutine when the writer is
// idle; mixed with write from other goroutines, every frame reaches the
// connection whole and each goroutine's frames in the order it wrote them.
func TestFrameWriterWriteNowKeepsFramesWholeAndInOrder(t *testing.T) {
	server, client := net.Pipe()
	w := newFrameWriter(server)
	go w.run()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(client)
		got <- b
	}()
	const writers, each = 4, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				line := fmt.Appendf(nil, "g%d-%05d %s\n", g, i, strings.Repeat("x", i%200))
				fn := func(b []byte) []byte { return append(b, line...) }
				if g%2 == 0 {
					w.writeNow(fn)
				} else {
					w.write(fn)
				}
			}
		})
	}
	wg.Wait()
	w.close()
	<-w.done
	server.Close()
	next := make([]int, writers)
	for _, line := range bytes.Split(bytes.TrimSuffix(<-got, []byte("\n")), []byte("\n")) {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(string(line), "g%d-%05d %s", &g, &i, &pad); err != nil && i%200 != 0 {
			t.Fatalf("a frame was cut or mixed: %q", line)
		}
		if g < 0 || g >= writers || i != next[g] || len(pad) != i%200 {
			t.Fatalf("frame %q out of order or damaged: want g%d-%05d", line, g, next[g])
		}
		next[g]++
	}
	for g, n := range next {
		if n != each {
			t.Errorf("goroutine %d: %d frames written, want %d", g, n, each)
		}
	}
}

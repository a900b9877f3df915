package sqlitestore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/core/storetest"
)

// crashDirEnv names the data folder of the crash test's child process; the
// test runs as the child when it is set.
const crashDirEnv = "LAPSE_SQLITESTORE_CRASH_DIR"

const (
	crashWriters = 8
	crashAcks    = 5000 // acknowledgements the parent reads before it kills the child
)

// crashBody is the body of item seq of writer w, so that a torn or mixed
// up write shows.
func crashBody(w int, seq uint64) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("writer %d item %d;", w, seq)), 4)
}

func crashKey(w int) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: fmt.Sprintf("/crash-%d", w)}
}

// TestCrashKeepsAcknowledgedWrites_EM3 kills (SIGKILL) a process that is
// writing as fast as it can and checks that every write whose Commit it
// had seen succeed is in the store when it is opened again (EM-3).
func TestCrashKeepsAcknowledgedWrites_EM3(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsAcknowledgedWrites_EM3$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	// Read acknowledgements until there are enough, or ten seconds pass.
	acked := map[int]map[uint64]bool{}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	n := 0
	record := func(line string) {
		var w int
		var seq uint64
		if _, err := fmt.Sscanf(line, "ack %d %d", &w, &seq); err != nil {
			return // the test binary's own output
		}
		if acked[w] == nil {
			acked[w] = map[uint64]bool{}
		}
		acked[w][seq] = true
		n++
	}
	deadline := time.After(10 * time.Second)
read:
	for n < crashAcks {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the child process ended after %d acknowledgements", n)
			}
			record(line)
		case <-deadline:
			break read
		}
	}
	if n < 100 {
		t.Fatalf("only %d acknowledgements in ten seconds", n)
	}

	// While it runs, the child holds the data folder.
	MustFailOpen(t, dir, core.ERESOURCELOCKED, "is in use by another lapse process (pid "+strconv.Itoa(cmd.Process.Pid)+")")

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	for line := range lines { // what it printed before it died was acknowledged too
		record(line)
	}
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, want killed by SIGKILL", cmd.ProcessState)
	}

	// The OS let go of the lock: the store opens, and holds every
	// acknowledged write.
	snap := storetest.MustLoad(t, MustOpen(t, dir))
	missing := 0
	for w, seqs := range acked {
		k := crashKey(w)
		stored := map[uint64][]byte{}
		for _, it := range snap.Items[k] {
			stored[it.Seq] = it.Body
			if !bytes.Equal(it.Body, crashBody(w, it.Seq)) { // acknowledged or not
				t.Errorf("writer %d item %d: body %q, want %q", w, it.Seq, it.Body, crashBody(w, it.Seq))
			}
		}
		e, _ := snap.Entity(k)
		for seq := range seqs {
			if _, ok := stored[seq]; !ok {
				missing++
			}
			if e.LastSeq < seq {
				t.Errorf("writer %d: LastSeq %d, below acknowledged item %d", w, e.LastSeq, seq)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged writes are missing after kill -9", missing, n)
	}
	t.Logf("%d acknowledged writes, all kept after kill -9", n)
}

// crashChild writes from several goroutines as fast as it can and prints
// "ack W SEQ" once the write of item SEQ of writer W is committed, until it
// is killed. It exits by itself after a minute, should no one kill it.
func crashChild(dir string) {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	time.AfterFunc(time.Minute, func() { os.Exit(3) })
	var out sync.Mutex
	var wg sync.WaitGroup
	ctx := context.Background()
	for w := range crashWriters {
		wg.Go(func() {
			k := crashKey(w)
			if err := s.Append([]core.Op{{Kind: core.OpPutEntity, Key: k, Entity: &core.Entity{EntityKey: k, Kind: "queue", Durable: true}}}).Wait(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "crash child:", err)
				os.Exit(2)
			}
			for seq := uint64(1); ; seq++ {
				it := &core.Item{Seq: seq, Body: crashBody(w, seq), Persistent: true}
				if err := s.Append([]core.Op{{Kind: core.OpPutItem, Key: k, Item: it}}).Wait(ctx); err != nil {
					fmt.Fprintln(os.Stderr, "crash child:", err)
					os.Exit(2)
				}
				// One write(2) per line, straight to the pipe: nothing
				// acknowledged waits in a buffer of ours.
				out.Lock()
				_, _ = os.Stdout.WriteString("ack " + strconv.Itoa(w) + " " + strconv.FormatUint(seq, 10) + "\n")
				out.Unlock()
			}
		})
	}
	wg.Wait()
}

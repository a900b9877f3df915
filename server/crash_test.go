package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// crashDirEnv names the data folder of the child lapse that
// TestKillNineKeepsAcknowledgedWrites_EM3_RB13 kills.
const crashDirEnv = "LAPSE_TEST_CRASH_DIR"

// The child's two queues: messages of the first run out while lapse is
// down, those of the second outlive the downtime.
var (
	crashShort = core.EntityKey{Protocol: core.RabbitMQ, Name: "/short"}
	crashLong  = core.EntityKey{Protocol: core.RabbitMQ, Name: "/long"}
)

// rule: EM-3 (what a client was told is stored survives kill -9), RB-13
// (what ran out while lapse was down is expired, and dead-lettered, at start).
// A child process runs lapse and writes persistent messages from several
// goroutines, printing each one once its Commit is done; the test kills it
// with SIGKILL under that load, starts lapse again on the folder two hours
// later, and checks every acknowledged message.
func TestKillNineKeepsAcknowledgedWrites_EM3_RB13(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineKeepsAcknowledgedWrites_EM3_RB13$", "-test.count=1")
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

	acked := map[string]map[uint64]bool{crashShort.Name: {}, crashLong.Name: {}}
	n := 0
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	record := func(line string) {
		var name string
		var seq uint64
		if _, err := fmt.Sscanf(line, "ack %s %d", &name, &seq); err == nil && acked[name] != nil {
			acked[name][seq] = true
			n++
		}
	}
	deadline := time.After(20 * time.Second)
read:
	for n < 3000 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the child lapse ended after %d acknowledgements", n)
			}
			record(line)
		case <-deadline:
			break read
		}
	}
	if n < 100 {
		t.Fatalf("only %d acknowledgements in 20 s", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	for line := range lines { // printed before it died: acknowledged too
		record(line)
	}
	_ = cmd.Wait()

	// lapse comes back two hours later: the 1 h messages ran out meanwhile.
	m := MustStartWall(t, func() time.Time { return time.Now().Add(2 * time.Hour) }, "--data", dir)
	long, err := m.Engine.Items(m.Clock.Now(), crashLong, 0)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[uint64]bool{}
	for _, it := range long {
		kept[it.Seq] = true
	}
	missing := 0
	for seq := range acked[crashLong.Name] {
		if !kept[seq] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged messages of %s lost by kill -9", missing, len(acked[crashLong.Name]), crashLong.Name)
	}
	short, _ := m.Engine.Items(m.Clock.Now(), crashShort, 0)
	if len(short) != 0 {
		t.Errorf("%d messages of %s outlived their TTL across the downtime", len(short), crashShort.Name)
	}
	expired := map[uint64]bool{}
	for _, ev := range m.Engine.Events(core.EventQuery{Entity: crashShort.Name}) {
		if ev.Action == core.ActionExpired && ev.Rule == "RB-3" {
			expired[ev.Item] = true
		}
	}
	for seq := range acked[crashShort.Name] {
		if !expired[seq] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged messages of %s were not expired at start", missing, crashShort.Name)
	}
	t.Logf("%d acknowledged writes before kill -9: %d kept, %d expired at start", n, len(acked[crashLong.Name]), len(acked[crashShort.Name]))
}

// crashChild runs lapse on dir and writes until it is killed; it gives up
// by itself after a minute.
func crashChild(dir string) {
	m := NewMain()
	m.Stderr = io.Discard
	if err := m.ParseFlags(serveArgs(dir), noEnv); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	time.AfterFunc(time.Minute, func() { os.Exit(3) })
	for k, ttl := range map[core.EntityKey]time.Duration{crashShort: time.Hour, crashLong: 48 * time.Hour} {
		en := core.Entity{EntityKey: k, Kind: "queue", Durable: true, Policy: core.Policy{
			DefaultTTL: core.After(ttl), MaxTTL: core.After(ttl), HeadOnly: true,
			Rules: core.RuleIDs{DefaultTTL: "RB-1", Expire: "RB-3"}}}
		_, c, err := m.Engine.Create(m.Clock.Now(), en)
		if err == nil {
			err = c.Wait(ctx)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		k := crashShort
		if w%2 == 1 {
			k = crashLong
		}
		wg.Go(func() {
			for {
				it, c, err := m.Engine.Enqueue(m.Clock.Now(), k, core.Item{Body: []byte("message from writer " + strconv.Itoa(w)), Persistent: true})
				if err == nil {
					err = c.Wait(ctx)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "crash child:", err)
					os.Exit(2)
				}
				out.Lock()
				_, _ = os.Stdout.WriteString("ack " + k.Name + " " + strconv.FormatUint(it.Seq, 10) + "\n")
				out.Unlock()
			}
		})
	}
	wg.Wait()
}

package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// sbCrashSenders is how many connections send at once: the more sends are
// in flight when the child dies, the likelier an acknowledgement that ran
// ahead of its commit shows up as a lost message.
const sbCrashSenders = 8

// sbCrashRounds is how many times the child is killed: each kill catches
// a few sends in flight, so a few rounds make an acknowledgement that ran
// ahead of its commit show up as a lost message.
const sbCrashRounds = 3

// rule: EM-3. A child process runs lapse; the parent creates a queue with
// the admin API, then azservicebus senders on several connections send
// continuously, each SendMessage returning nil only once lapse sent the
// accepted disposition; the child is killed with SIGKILL under that load
// once about 1000 sends were accepted, and started again on its data
// folder, a few times over. Then lapse runs on the folder: the queue and
// every message whose send was accepted must be there, once.
func TestKillNineKeepsAcceptedServiceBusSends_EM3(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		serveChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	accepted := map[string]bool{}
	for round := range sbCrashRounds {
		sbCrashRound(ctx, t, dir, round, accepted)
	}

	m := MustStart(t, "--data", dir)
	ad := MustSBAdmin(t, m)
	rt, err := ad.GetQueueRuntimeProperties(ctx, "crash", nil)
	if err != nil || rt == nil {
		t.Fatalf("the queue created before the kills: %+v %v", rt, err)
	}
	r, err := MustSBClient(t, m).NewReceiverForQueue("crash",
		&azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	got := map[string]int{}
	for n := int32(0); n < rt.ActiveMessageCount; {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		msgs, err := r.ReceiveMessages(rctx, 1000, nil)
		rcancel()
		if err != nil {
			t.Fatalf("received %d of the %d messages of the queue: %v", n, rt.ActiveMessageCount, err)
		}
		for _, msg := range msgs {
			got[msg.MessageID]++
			if string(msg.Body) != msg.MessageID {
				t.Errorf("message %q has body %q", msg.MessageID, msg.Body)
			}
		}
		n += int32(len(msgs))
	}
	lost, twice := 0, 0
	for id := range accepted {
		switch got[id] {
		case 0:
			lost++
		case 1:
		default:
			twice++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d accepted sends lost after kill -9", lost, len(accepted))
	}
	if twice > 0 {
		t.Errorf("%d of %d accepted sends stored more than once (the senders do not retry)", twice, len(accepted))
	}
	if lost == 0 && twice == 0 {
		t.Logf("%d accepted sends over %d kills all kept (%d messages in the queue)", len(accepted), sbCrashRounds, rt.ActiveMessageCount)
	}
}

// sbCrashRound starts a child lapse on dir, creates the queue "crash" in
// the first round, sends to it from sbCrashSenders connections and kills
// the child with SIGKILL once about 1000 more sends were accepted. It adds
// the message IDs of the accepted sends to accepted.
func sbCrashRound(ctx context.Context, t *testing.T, dir string, round int, accepted map[string]bool) {
	t.Helper()
	child := startChild(t, dir)
	amqpAddr, adminAddr := child.addrs["amqp"], child.addrs["servicebusAdmin"]
	if round == 0 {
		if _, err := mustSBAdminAt(t, adminAddr).CreateQueue(ctx, "crash", nil); err != nil {
			t.Fatalf("CreateQueue: %v", err)
		}
	}

	// The senders stop when sending is cancelled, right after the kill;
	// a send cut short by it is not counted.
	sending, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu  sync.Mutex
		n   int
		wg  sync.WaitGroup
		ids = make([][]string, sbCrashSenders)
	)
	for w := range sbCrashSenders {
		// Each sender has its own client, hence its own connection, and
		// no retries: a send that returns nil was accepted once.
		c, err := azservicebus.NewClientFromConnectionString(sbConnString(amqpAddr),
			&azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(context.Background())
			s, err := c.NewSender("crash", nil)
			if err != nil {
				return
			}
			defer s.Close(context.Background())
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%d-w%d-%d", round, w, i)
				if err := s.SendMessage(sending, &azservicebus.Message{MessageID: &id, Body: []byte(id)}, nil); err != nil {
					return
				}
				ids[w] = append(ids[w], id)
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	// Kill once a good number of sends are accepted.
	child.killWhen(1000, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	})
	stop()
	wg.Wait()
	total := 0
	for _, ws := range ids {
		for _, id := range ws {
			accepted[id] = true
		}
		total += len(ws)
	}
	if total == 0 {
		t.Fatalf("round %d: no send was accepted before the kill", round)
	}
}

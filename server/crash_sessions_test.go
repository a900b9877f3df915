package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

// rule: EM-3, SS-4. As TestKillNineKeepsAcceptedServiceBusSends_EM3, on a
// queue that requires sessions: each sender sends to a session of its own
// per round, and one more connection holds a session and sets its state
// to a counter, over and over; the child is killed with SIGKILL under that
// load, a few times over. Then every message whose send was accepted is
// there, once, in its session, in the order it was sent, and the state is
// the last one whose setting was acknowledged (or the one in flight).
func TestKillNineKeepsAcceptedSessionSendsAndState_EM3_SS4(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		serveChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sent := map[string][]string{} // session -> accepted message ids, in send order
	lastState := 0
	for round := range sbCrashRounds {
		sessionCrashRound(ctx, t, dir, round, sent, &lastState)
	}

	m := MustStart(t, "--data", dir)
	rt, err := MustSBAdmin(t, m).GetQueueRuntimeProperties(ctx, "scrash", nil)
	if err != nil || rt == nil {
		t.Fatalf("the queue created before the kills: %+v %v", rt, err)
	}
	c := MustSBClient(t, m)
	got := map[string][]string{}
	for n := int32(0); n < rt.ActiveMessageCount; {
		actx, acancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := c.AcceptNextSessionForQueue(actx, "scrash", &azservicebus.SessionReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
		acancel()
		if err != nil {
			t.Fatalf("received %d of the %d messages of the queue: %v", n, rt.ActiveMessageCount, err)
		}
		for {
			// lapse has them all: a short wait tells the session is empty
			rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			msgs, err := r.ReceiveMessages(rctx, 1000, nil)
			rcancel()
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatal(err)
			}
			if len(msgs) == 0 {
				break
			}
			for _, msg := range msgs {
				got[r.SessionID()] = append(got[r.SessionID()], msg.MessageID)
			}
			n += int32(len(msgs))
		}
		r.Close(ctx)
	}
	lost, twice, disordered, total := 0, 0, 0, 0
	for session, ids := range sent {
		have := map[string]int{}
		for _, id := range got[session] {
			have[id]++
		}
		for _, id := range ids {
			switch have[id] {
			case 0:
				lost++
			case 1:
			default:
				twice++
			}
		}
		// the accepted sends come first, in their order; a send in
		// flight at the kill may follow
		for i, id := range ids {
			if i >= len(got[session]) || got[session][i] != id {
				disordered++
				break
			}
		}
		total += len(ids)
	}
	if lost > 0 || twice > 0 || disordered > 0 {
		t.Errorf("after kill -9, of %d accepted sends over %d sessions: %d lost, %d stored twice, %d sessions out of order", total, len(sent), lost, twice, disordered)
	}
	r, err := c.AcceptSessionForQueue(ctx, "scrash", "state", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	st, err := r.GetSessionState(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := strconv.Atoi(string(st)); err != nil || (v != lastState && v != lastState+1) {
		t.Errorf("the session state after the kills is %q, want the last acknowledged %d (or the one in flight)", st, lastState)
	}
	if !t.Failed() {
		t.Logf("%d accepted sends over %d sessions and %d kills kept in order; state %s kept", total, len(sent), sbCrashRounds, st)
	}
}

// sessionCrashRound is sbCrashRound on the session queue "scrash": each
// sender sends to the session "r<round>-w<sender>", and one more
// connection sets the state of the session "state" to lastState+1,
// lastState+2... until the kill; lastState ends as the last acknowledged.
func sessionCrashRound(ctx context.Context, t *testing.T, dir string, round int, sent map[string][]string, lastState *int) {
	t.Helper()
	child := startChild(t, dir)
	amqpAddr, adminAddr := child.addrs["amqp"], child.addrs["servicebusAdmin"]
	if round == 0 {
		requires := true
		if _, err := mustSBAdminAt(t, adminAddr).CreateQueue(ctx, "scrash", &admin.CreateQueueOptions{
			Properties: &admin.QueueProperties{RequiresSession: &requires}}); err != nil {
			t.Fatalf("CreateQueue: %v", err)
		}
	}
	sending, stop := context.WithCancel(ctx)
	defer stop()
	noRetries := &azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}}
	var (
		mu  sync.Mutex
		n   int
		wg  sync.WaitGroup
		ids = make([][]string, sbCrashSenders)
	)
	for w := range sbCrashSenders {
		c, err := azservicebus.NewClientFromConnectionString(sbConnString(amqpAddr), noRetries)
		if err != nil {
			t.Fatal(err)
		}
		session := fmt.Sprintf("r%d-w%d", round, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(context.Background())
			s, err := c.NewSender("scrash", nil)
			if err != nil {
				return
			}
			defer s.Close(context.Background())
			for i := 0; ; i++ {
				id := fmt.Sprintf("%s-%d", session, i)
				if err := s.SendMessage(sending, &azservicebus.Message{MessageID: &id, SessionID: &session, Body: []byte(id)}, nil); err != nil {
					return
				}
				ids[w] = append(ids[w], id)
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	sc, err := azservicebus.NewClientFromConnectionString(sbConnString(amqpAddr), noRetries)
	if err != nil {
		t.Fatal(err)
	}
	state := *lastState
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer sc.Close(context.Background())
		r, err := sc.AcceptSessionForQueue(sending, "scrash", "state", nil)
		if err != nil {
			return
		}
		for {
			if err := r.SetSessionState(sending, []byte(strconv.Itoa(state+1)), nil); err != nil {
				return
			}
			state++
		}
	}()
	child.killWhen(1000, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	})
	stop()
	wg.Wait()
	*lastState = state
	total := 0
	for w, ws := range ids {
		sent[fmt.Sprintf("r%d-w%d", round, w)] = ws
		total += len(ws)
	}
	if total == 0 {
		t.Fatalf("round %d: no send was accepted before the kill", round)
	}
}

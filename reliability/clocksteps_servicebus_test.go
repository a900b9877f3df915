//go:build reliability

package reliability

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

const (
	// clockSBQueue is the Service Bus queue of the test.
	clockSBQueue = "clock-sb"
	// clockSBDefaultTTL is its DefaultMessageTimeToLive: the TTL of a
	// message without one and the ceiling of the others (SB-2).
	clockSBDefaultTTL = 5 * time.Minute
	// clockSBLock is its LockDuration, the longest Service Bus allows.
	clockSBLock = 5 * time.Minute
	// clockSBMax caps the messages sent (see clockRabbitMax).
	clockSBMax = 2000
)

// clockServiceBus is the Service Bus load: one sender, one peek-lock
// receiver that completes what it gets. Message i (its message id) is
// msgs[i-1], and its sequence number is i: lapse numbers a queue's
// messages in the order they arrive, and the one sender waits for each
// send to be accepted; the receiver checks it.
type clockServiceBus struct {
	client   *azservicebus.Client
	mu       sync.Mutex
	msgs     []*clockSBMsg
	received atomic.Int64
	lockLost atomic.Int64
}

type clockSBMsg struct {
	ttl       time.Duration // its effective TTL (SB-1, SB-2)
	eLo, eHi  time.Time     // lapse's clock at its enqueue is between these
	completed bool
	expired   bool
}

// clockPlainHTTP sends the admin client's https requests over plain HTTP,
// as the official emulator's Go sample does.
type clockPlainHTTP struct{ base *http.Transport }

func (p clockPlainHTTP) Do(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *r.URL
	u.Scheme = "http"
	r.URL = &u
	return p.base.RoundTrip(r)
}

func clockServiceBusSetup(t *testing.T, l *Lapse) *clockServiceBus {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	ac, err := admin.NewClientFromConnectionString(
		"Endpoint=sb://"+l.Addrs["servicebusAdmin"]+";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
		&admin.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: clockPlainHTTP{base: tr}, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateQueue(context.Background(), clockSBQueue, &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DefaultMessageTimeToLive: to.Ptr("PT5M"), LockDuration: to.Ptr("PT5M"), MaxDeliveryCount: to.Ptr(int32(100))}}); err != nil {
		t.Fatal(err)
	}
	c, err := azservicebus.NewClientFromConnectionString(l.ServiceBusConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return &clockServiceBus{client: c}
}

func (sb *clockServiceBus) run(t *testing.T, r *clockRun, seed uint64, wg *sync.WaitGroup) {
	t.Helper()
	s, err := sb.client.NewSender(clockSBQueue, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := sb.client.NewReceiverForQueue(clockSBQueue, nil)
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go sb.send(t, r, s, rand.New(rand.NewPCG(seed, 2)), wg)
	go sb.receive(t, r, rc, wg)
}

// send sends messages, 80% with a TTL of their own between 1 ms and 10
// min (cut to the queue's 5 min), each accepted before the next.
func (sb *clockServiceBus) send(t *testing.T, r *clockRun, s *azservicebus.Sender, rng *rand.Rand, wg *sync.WaitGroup) {
	defer wg.Done()
	defer s.Close(context.Background())
	for n := 0; n < clockSBMax && !r.stop.Load(); n++ {
		m := &clockSBMsg{ttl: clockSBDefaultTTL, eLo: r.lower(), eHi: r.at[len(r.at)-1]}
		msg := &azservicebus.Message{Body: []byte("clock step message")}
		if rng.IntN(5) > 0 {
			own := clockLogUniform(rng, time.Millisecond, 10*time.Minute)
			msg.TimeToLive = &own
			m.ttl = min(own, clockSBDefaultTTL)
		}
		sb.mu.Lock()
		sb.msgs = append(sb.msgs, m)
		id := len(sb.msgs)
		sb.mu.Unlock()
		msg.MessageID = to.Ptr(strconv.Itoa(id))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := s.SendMessage(ctx, msg, nil)
		cancel()
		if err != nil {
			t.Errorf("servicebus send %d: %v", id, err)
			return
		}
		hi := r.upper()
		sb.mu.Lock()
		m.eHi = hi
		sb.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

// receive takes messages more slowly than they come and completes them.
// Each one says when lapse locked it: its locked-until minus the queue's
// lock duration, on lapse's clock.
func (sb *clockServiceBus) receive(t *testing.T, r *clockRun, rc *azservicebus.Receiver, wg *sync.WaitGroup) {
	defer wg.Done()
	defer rc.Close(context.Background())
	for !r.stop.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		got, err := rc.ReceiveMessages(ctx, 4, nil)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("servicebus receive: %v", err)
			return
		}
		for _, m := range got {
			sb.check(r, m)
			time.Sleep(10 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := rc.CompleteMessage(ctx, m, nil)
			cancel()
			var sbErr *azservicebus.Error
			switch {
			case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeLockLost:
				// A step passed its lock (SB-7): it is back in the queue,
				// or expired if its TTL ran out too.
				sb.lockLost.Add(1)
			case err != nil:
				t.Errorf("servicebus complete: %v", err)
				return
			default:
				sb.mu.Lock()
				if i, ok := clockItemIndex(m.MessageID, ""); ok && i <= len(sb.msgs) {
					sb.msgs[i-1].completed = true
				}
				sb.mu.Unlock()
			}
		}
	}
}

// check checks a received message: its sequence number, its enqueue time,
// and that lapse locked it before it was due (SB-6).
func (sb *clockServiceBus) check(r *clockRun, m *azservicebus.ReceivedMessage) {
	hi := r.upper()
	sb.received.Add(1)
	i, ok := clockItemIndex(m.MessageID, "")
	sb.mu.Lock()
	if !ok || i > len(sb.msgs) {
		sb.mu.Unlock()
		r.violate("servicebus received a message with id %q that was not sent", m.MessageID)
		return
	}
	rec := *sb.msgs[i-1]
	sb.mu.Unlock()
	if m.SequenceNumber == nil || *m.SequenceNumber != int64(i) || m.EnqueuedTime == nil || m.LockedUntil == nil {
		r.violate("servicebus message %d: sequence number %v (want %d), enqueued %v, locked until %v", i, m.SequenceNumber, i, m.EnqueuedTime, m.LockedUntil)
		return
	}
	if rec.completed {
		r.violate("servicebus message %d received again after it was completed", i)
	}
	enq := *m.EnqueuedTime
	if enq.Before(rec.eLo) || enq.After(clockEarlier(rec.eHi, hi)) {
		r.violate("servicebus message %d enqueued at %v, outside the clock's %v..%v while it was sent", i, enq, rec.eLo, clockEarlier(rec.eHi, hi))
	}
	// rule: SB-6 (SB-1, SB-2)
	locked, due := m.LockedUntil.Add(-clockSBLock), enq.Add(rec.ttl)
	if !locked.Before(due) {
		r.violate("servicebus message %d (TTL %v) locked for a receiver at %v, at or after its due time %v (SB-6)",
			i, rec.ttl, locked.Format(time.RFC3339Nano), due.Format(time.RFC3339Nano))
	}
}

// expired checks an expiry event against the message it names.
func (sb *clockServiceBus) expired(r *clockRun, ev Event) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if ev.Entity != clockSBQueue || ev.Item < 1 || ev.Item > uint64(len(sb.msgs)) {
		r.violate("servicebus event %d names message %d of %q; %d were sent to %s: %+v", ev.ID, ev.Item, ev.Entity, len(sb.msgs), clockSBQueue, ev)
		return
	}
	m := sb.msgs[ev.Item-1]
	switch {
	case m.expired:
		r.violate("servicebus message %d has two expiry events (the second %d)", ev.Item, ev.ID)
	case m.completed:
		r.violate("servicebus message %d was completed and has an expiry event %d", ev.Item, ev.ID)
	case ev.Rule != "SB-8":
		r.violate("servicebus event %d: rule %q, want SB-8 (expired, dropped): %+v", ev.ID, ev.Rule, ev)
	case ev.Due.Before(m.eLo.Add(m.ttl)) || ev.Due.After(m.eHi.Add(m.ttl)):
		r.violate("servicebus message %d (TTL %v) expired as due at %v, outside %v..%v", ev.Item, m.ttl, ev.Due, m.eLo.Add(m.ttl), m.eHi.Add(m.ttl))
	}
	m.expired = true
}

// account checks that each message sent was completed or expired.
func (sb *clockServiceBus) account(r *clockRun) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for i, m := range sb.msgs {
		if !m.completed && !m.expired {
			r.violate("servicebus message %d was neither completed nor expired (no event)", i+1)
		}
	}
}

func (sb *clockServiceBus) sent() int {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return len(sb.msgs)
}

func (sb *clockServiceBus) completed() (n int) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for _, m := range sb.msgs {
		if m.completed {
			n++
		}
	}
	return n
}

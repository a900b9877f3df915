//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clockSteps is how many random clock steps the test takes under load.
const clockSteps = 100

// clockFinalStep is the last advance, after the load stopped: longer than
// every TTL the producers give (10 min at most, the Service Bus queue's 5
// min ceiling, Cosmos's 600 s) and than the Service Bus lock (5 min), so
// that every item left expires.
const clockFinalStep = 15 * time.Minute

// clockRun is what the load goroutines share with the test's advancing
// loop. lapse's clock is frozen and moves only by the test's advances,
// whose sizes are drawn before the load starts, so at[k], the clock after
// k advances, is known to everyone; started and completed count the
// advances sent and returned. A client reads completed before it sends a
// request and started after the answer came: lapse handled the request at
// a clock between the two.
type clockRun struct {
	at        []time.Time
	started   atomic.Int64
	completed atomic.Int64
	stop      atomic.Bool

	mu         sync.Mutex
	violations []string
}

// lower is a time lapse's clock has reached: the clock after every
// advance that has returned (EM-1: everything due up to it is applied).
func (r *clockRun) lower() time.Time { return r.at[r.completed.Load()] }

// upper is a time lapse's clock has not passed: the clock after every
// advance that has been sent.
func (r *clockRun) upper() time.Time { return r.at[r.started.Load()] }

// violate records a broken rule; the test fails with them at the end.
func (r *clockRun) violate(format string, args ...any) {
	r.mu.Lock()
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// clockLogUniform draws a duration between lo and hi, whole milliseconds,
// uniform in its logarithm so that short and long ones are both common.
func clockLogUniform(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	a, b := math.Log(float64(lo.Milliseconds())), math.Log(float64(hi.Milliseconds()))
	return time.Duration(math.Round(math.Exp(a+rng.Float64()*(b-a)))) * time.Millisecond
}

// clockEarlier returns the earlier of a and b.
func clockEarlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// clockSeed is CLOCKSTEPS_SEED when set (to replay a failure), else new.
func clockSeed(t *testing.T) uint64 {
	if s := os.Getenv("CLOCKSTEPS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CLOCKSTEPS_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// issue 16, the standing test: the clock advanced in 100 random steps
// while RabbitMQ, Service Bus and Cosmos DB clients write and read items
// with random TTLs. No item reaches a consumer at or after its due time on
// lapse's clock: RB-3 (per-queue TTL RB-1, per-message expiration RB-5,
// the lower of the two; expired only at the head, RB-7), SB-6 (message TTL
// SB-1, cut to the queue's default SB-2), CO-6 (item ttl or the
// container's default, CO-4, counted from _ts, CO-1); none disappears
// before it (Cosmos reads, event due times); and each item that expired
// has exactly one expiry event naming it and its rule (EM-2): every item
// written was either delivered or expired, never both.
//
// When a delivery happened on lapse's clock: a Service Bus message says it
// (locked-until minus the lock duration); a RabbitMQ consumer with
// prefetch 1 is sent a message only after lapse read its ack of the one
// before, so lapse's clock then was at least lower() read before that ack;
// a Cosmos read was handled between lower() before the request and upper()
// after the answer.
func TestRandomClockStepsUnderLoad(t *testing.T) {
	seed := clockSeed(t)
	t.Logf("seed %d (CLOCKSTEPS_SEED=%d replays the steps and TTLs)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	begin := time.Now()

	l := Start(t, "")
	l.Freeze()
	// Whole seconds and milliseconds from here on: Service Bus carries
	// times in milliseconds and Cosmos's _ts in seconds.
	start := l.Now().Truncate(time.Second).Add(time.Second)
	l.Must(l.Control.Do(context.Background(), "POST", "/api/clock/set", map[string]string{"now": start.Format(time.RFC3339Nano)}, nil))
	if now := l.Now(); !now.Equal(start) {
		t.Fatalf("clock set to %v reads %v", start, now)
	}

	r := &clockRun{at: []time.Time{start}}
	steps := make([]time.Duration, 0, clockSteps+1)
	for range clockSteps {
		steps = append(steps, clockLogUniform(rng, time.Millisecond, 3*time.Minute))
	}
	steps = append(steps, clockFinalStep)
	for _, d := range steps {
		r.at = append(r.at, r.at[len(r.at)-1].Add(d))
	}

	rb := clockRabbitSetup(t, l)
	sb := clockServiceBusSetup(t, l)
	co := clockCosmosSetup(t, l)
	var load sync.WaitGroup
	rb.run(t, l, r, seed, &load)
	sb.run(t, r, seed, &load)
	co.run(t, r, seed, &load)

	var events []Event
	var lastID uint64
	readEvents := func() {
		evs := l.Events(lastID)
		if len(evs) > 0 && evs[0].ID != lastID+1 {
			t.Fatalf("events %d..%d are gone from the log: it wrapped between two reads", lastID+1, evs[0].ID-1)
		}
		for _, ev := range evs {
			lastID = ev.ID
		}
		events = append(events, evs...)
	}
	var took []time.Duration
	advance := func(d time.Duration) {
		r.started.Add(1)
		t0 := time.Now()
		l.Advance(d)
		took = append(took, time.Since(t0))
		r.completed.Add(1)
		readEvents()
	}
	loadStart := time.Now()
	for _, d := range steps[:clockSteps] {
		// Let the load run between steps: producers write, consumers
		// fall behind, so that each step finds items to expire.
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		advance(d)
	}
	loadTime := time.Since(loadStart)
	r.stop.Store(true)
	rb.stop(t)
	load.Wait()
	l.Alive()
	advance(steps[clockSteps])
	if now, want := l.Now(), r.at[len(r.at)-1]; !now.Equal(want) {
		t.Errorf("after %d advances the clock reads %v, want %v", len(steps), now, want)
	}

	expired := clockCheckEvents(t, r, events, rb, sb, co)
	for _, v := range r.violations[:min(len(r.violations), 20)] {
		t.Error(v)
	}
	if len(r.violations) > 20 {
		t.Errorf("... and %d more", len(r.violations)-20)
	}
	clockCheckEmpty(t, l)

	slices.Sort(took)
	t.Logf("clock steps: seed %d; %d steps (%v to %v of lapse time in all) under %v of load; per advance p50 %v, max %v (the final %v one included)",
		seed, len(steps), r.at[0].Format(time.TimeOnly), r.at[len(r.at)-1].Sub(r.at[0]), loadTime.Round(time.Millisecond),
		took[len(took)/2].Round(time.Microsecond), took[len(took)-1].Round(time.Microsecond), clockFinalStep)
	t.Logf("clock steps: rabbitmq %d published, %d delivered, %d expired; servicebus %d sent, %d received, %d completed, %d lost their lock, %d expired; cosmos %d written, %d read or queried back, %d gone (404 or absent after due), %d expired",
		rb.published(), rb.delivered(), expired["rabbitmq"], sb.sent(), sb.received.Load(), sb.completed(), sb.lockLost.Load(), expired["servicebus"],
		co.written(), co.reads.Load(), co.gone.Load(), expired["cosmos"])
	t.Logf("clock steps: %d events in all; total time %v", len(events), time.Since(begin).Round(time.Millisecond))
}

// clockCheckEvents matches the events to the items written: each expiry
// event names an item written, one that was never delivered, due no
// earlier than the item could be and applied no earlier than due, with the
// rule the protocol's expiry follows; each item is delivered or expired,
// once. It returns the expiry events per protocol.
func clockCheckEvents(t *testing.T, r *clockRun, events []Event, rb *clockRabbit, sb *clockServiceBus, co *clockCosmos) map[string]int {
	t.Helper()
	expired := map[string]int{}
	for _, ev := range events {
		if ev.Time.Before(ev.Due) {
			r.violate("event %d applied at %v, before its due time %v: %+v", ev.ID, ev.Time, ev.Due, ev)
		}
		if ev.Protocol == "servicebus" && ev.Action == "lock-lost" && ev.Rule == "SB-7" {
			continue
		}
		if ev.Action != "expired" {
			r.violate("event %d: action %q, want expired (nothing dead-letters here): %+v", ev.ID, ev.Action, ev)
			continue
		}
		expired[ev.Protocol]++
		switch ev.Protocol {
		case "rabbitmq":
			rb.expired(r, ev)
		case "servicebus":
			sb.expired(r, ev)
		case "cosmos":
			co.expired(r, ev)
		default:
			r.violate("event %d of protocol %q: %+v", ev.ID, ev.Protocol, ev)
		}
	}
	rb.account(r)
	sb.account(r)
	co.account(r)
	return expired
}

// clockCheckEmpty fails unless every entity is empty after the final step.
func clockCheckEmpty(t *testing.T, l *Lapse) {
	t.Helper()
	var ents []struct {
		Protocol string         `json:"protocol"`
		Name     string         `json:"name"`
		Counts   map[string]int `json:"counts"`
	}
	l.Must(l.Control.Do(context.Background(), "GET", "/api/entities", nil, &ents))
	for _, e := range ents {
		for k, n := range e.Counts {
			if n != 0 {
				t.Errorf("%s %s still has %d %s items after every TTL ran out", e.Protocol, e.Name, n, k)
			}
		}
	}
}

// clockItemIndex reads the index a producer gave an item from the end of
// its message id or item key, after the last prefix ("...co-42" is 42;
// the whole of s with no prefix).
func clockItemIndex(s, prefix string) (int, bool) {
	i := strings.LastIndex(s, prefix)
	if i < 0 || prefix == "" {
		i = 0
	} else {
		i += len(prefix)
	}
	n, err := strconv.Atoi(s[i:])
	return n, err == nil && n > 0
}

package core_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// benchMessages is how many messages each round of BenchmarkSessions
// sends and settles.
const benchMessages = 10_000

// BenchmarkSessions sends 10,000 messages spread over 1, 100 or 10,000
// sessions, then accepts the next session until none is left, receives
// each of its messages, completes them and releases the session; "plain"
// sends and settles as many messages on an entity without sessions
// (receive, complete). It reports nanoseconds per message, enqueue
// included, and accepts per message.
func BenchmarkSessions(b *testing.B) {
	bodies := make([]byte, 100)
	b.Run("plain", func(b *testing.B) {
		e := core.NewEngine(core.Config{})
		k := core.EntityKey{Protocol: "bench", Name: "q"}
		e.Create(t0, core.Entity{EntityKey: k, Policy: core.Policy{DefaultTTL: core.After(time.Hour)}})
		start := time.Now()
		for range b.N {
			for range benchMessages {
				if _, _, err := e.Enqueue(t0, k, core.Item{Body: bodies}); err != nil {
					b.Fatal(err)
				}
			}
			for {
				it, ok, err := e.Receive(t0, k, t0.Add(time.Minute))
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				if _, err := e.Complete(t0, k, it.Seq); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchMessages), "ns/msg")
		b.ReportMetric(0, "ns/op")
	})
	for _, sessions := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			e := core.NewEngine(core.Config{})
			k := core.EntityKey{Protocol: "bench", Name: "q"}
			e.Create(t0, core.Entity{EntityKey: k, Policy: core.Policy{DefaultTTL: core.After(time.Hour), Sessions: true}})
			ids := make([]string, sessions)
			for i := range ids {
				ids[i] = "session-" + strconv.Itoa(i)
			}
			accepts := 0
			start := time.Now()
			for range b.N {
				for i := range benchMessages {
					if _, _, err := e.Enqueue(t0, k, core.Item{Group: ids[i%sessions], Body: bodies}); err != nil {
						b.Fatal(err)
					}
				}
				for {
					s, err := e.AcceptSession(t0, k, "", "receiver", t0.Add(time.Minute))
					if core.ErrorCode(err) == core.ENOSESSION {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					accepts++
					for {
						it, ok, err := e.ReceiveSession(t0, k, s.ID, "receiver")
						if err != nil {
							b.Fatal(err)
						}
						if !ok {
							break
						}
						if _, err := e.Holder(k, s.ID, "receiver").Complete(t0, it.Seq); err != nil {
							b.Fatal(err)
						}
					}
					if err := e.ReleaseSession(t0, k, s.ID, "receiver"); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchMessages), "ns/msg")
			b.ReportMetric(float64(accepts)/float64(b.N*benchMessages), "accepts/msg")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSessionsAcceptNext accepts the one session that has a message
// among 100, 10,000 or 100,000 sessions that others hold or that have
// nothing available, receives and completes the message and releases the
// session: the cost must not grow with the sessions accept-next skips.
func BenchmarkSessionsAcceptNext(b *testing.B) {
	for _, others := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			e := core.NewEngine(core.Config{})
			k := core.EntityKey{Protocol: "bench", Name: "q"}
			e.Create(t0, core.Entity{EntityKey: k, Policy: core.Policy{Sessions: true}})
			for i := range others {
				id := "other-" + strconv.Itoa(i)
				if i%2 == 0 { // held, with a message
					e.Enqueue(t0, k, core.Item{Group: id})
					if _, err := e.AcceptSession(t0, k, id, "holder-"+id, time.Time{}); err != nil {
						b.Fatal(err)
					}
				} else { // free, with a deferred message only
					e.AcceptSession(t0, k, id, "x", time.Time{})
					e.Enqueue(t0, k, core.Item{Group: id})
					it, _, _ := e.ReceiveSession(t0, k, id, "x")
					e.Holder(k, id, "x").Defer(t0, it.Seq)
					e.ReleaseSession(t0, k, id, "x")
				}
			}
			b.ResetTimer()
			for range b.N {
				e.Enqueue(t0, k, core.Item{Group: "mine"})
				s, err := e.AcceptSession(t0, k, "", "me", t0.Add(time.Minute))
				if err != nil || s.ID != "mine" {
					b.Fatalf("accept-next: %+v %v", s, err)
				}
				it, _, _ := e.ReceiveSession(t0, k, "mine", "me")
				e.Holder(k, "mine", "me").Complete(t0, it.Seq)
				e.ReleaseSession(t0, k, "mine", "me")
			}
		})
	}
}

package servicebus_test

import (
	"context"
	"sync"
	"testing"

	"github.com/Azure/go-amqp"
)

// The benchmarks below time a connection's hot path, from the socket to
// the engine and back, with go-amqp as the client: what a change to how a
// connection reads, writes or acknowledges must not slow down.

// BenchmarkSendAwaitOutcome sends 100-byte messages one at a time, each
// waiting for lapse's outcome, as a sender without concurrency does.
func BenchmarkSendAwaitOutcome(b *testing.B) {
	f := MustServer(b)
	f.MustQueue("q", nil)
	snd := MustSender(b, MustSession(b, MustDialAMQPTo(b, f.ln.Addr().String(), "q")), "q")
	body := make([]byte, 100)
	for b.Loop() {
		if err := snd.Send(context.Background(), &amqp.Message{Data: [][]byte{body}}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendConcurrent sends 100-byte messages from 64 goroutines on
// one sender, so that many deliveries are in flight at once and lapse
// acknowledges them in batches.
func BenchmarkSendConcurrent(b *testing.B) {
	f := MustServer(b)
	f.MustQueue("q", nil)
	snd := MustSender(b, MustSession(b, MustDialAMQPTo(b, f.ln.Addr().String(), "q")), "q")
	body := make([]byte, 100)
	const senders = 64
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < b.N; i += senders {
				if err := snd.Send(context.Background(), &amqp.Message{Data: [][]byte{body}}, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// BenchmarkReceivePeekLock receives 100-byte messages on a peek-lock
// receiver with a credit of 100 and completes each.
func BenchmarkReceivePeekLock(b *testing.B) {
	f := MustServer(b)
	f.MustQueue("q", nil)
	s := MustSession(b, MustDialAMQPTo(b, f.ln.Addr().String(), "q"))
	snd := MustSender(b, s, "q")
	body := make([]byte, 100)
	for range b.N {
		if err := snd.Send(context.Background(), &amqp.Message{Data: [][]byte{body}}, &amqp.SendOptions{Settled: true}); err != nil {
			b.Fatal(err)
		}
	}
	r := MustReceiver(b, s, "q", &amqp.ReceiverOptions{
		SettlementMode:            amqp.ReceiverSettleModeSecond.Ptr(),
		RequestedSenderSettleMode: amqp.SenderSettleModeUnsettled.Ptr(),
		Credit:                    100,
	})
	b.ResetTimer()
	for range b.N {
		m, err := r.Receive(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.AcceptMessage(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}

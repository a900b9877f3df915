package rabbitmq_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// BenchmarkTransientAutoAck publishes b.N transient 100-byte messages on one
// connection and consumes them with autoAck on another, in process: for
// profiles of the server's hot path (lapse-bench measures it end to end).
func BenchmarkTransientAutoAck(b *testing.B) {
	benchRoundTrip(b, true, 0)
}

// BenchmarkManualAckPrefetch100 is the same with one ack per message and a
// prefetch of 100.
func BenchmarkManualAckPrefetch100(b *testing.B) {
	benchRoundTrip(b, false, 100)
}

func benchRoundTrip(b *testing.B, autoAck bool, prefetch int) {
	f := MustServer(b)
	pub := f.MustChannel()
	MustDeclare(b, pub, "bench", nil)
	sub := f.MustChannel()
	if prefetch > 0 {
		if err := sub.Qos(prefetch, 0, false); err != nil {
			b.Fatal(err)
		}
	}
	msgs, err := sub.Consume("bench", "", autoAck, false, false, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < b.N; i++ {
			d := <-msgs
			if !autoAck {
				d.Ack(false)
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		if err := pub.PublishWithContext(context.Background(), "", "bench", false, false, amqp.Publishing{Body: body}); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// BenchmarkPublishOnly publishes b.N transient messages with no consumer.
func BenchmarkPublishOnly(b *testing.B) {
	f := MustServer(b)
	pub := f.MustChannel()
	MustDeclare(b, pub, "bench", nil)
	body := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := pub.PublishWithContext(context.Background(), "", "bench", false, false, amqp.Publishing{Body: body}); err != nil {
			b.Fatal(err)
		}
	}
	sync(b, pub)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// BenchmarkConsumeOnly consumes b.N messages published before the timer starts.
func BenchmarkConsumeOnly(b *testing.B) {
	f := MustServer(b)
	pub := f.MustChannel()
	MustDeclare(b, pub, "bench", nil)
	body := make([]byte, 100)
	for i := 0; i < b.N; i++ {
		if err := pub.PublishWithContext(context.Background(), "", "bench", false, false, amqp.Publishing{Body: body}); err != nil {
			b.Fatal(err)
		}
	}
	sync(b, pub)
	sub := f.MustChannel()
	b.ReportAllocs()
	b.ResetTimer()
	msgs, err := sub.Consume("bench", "", true, false, false, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		<-msgs
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// BenchmarkDeadLetterOnExpiry expires b.N messages of a queue with a
// message TTL and a dead-letter exchange in one clock advance: the cost of
// expiring, writing x-death and re-routing each (RB-9, RB-12).
func BenchmarkDeadLetterOnExpiry(b *testing.B) {
	f := MustServer(b)
	ch := f.MustChannel()
	withDLQ(b, ch, "q", amqp.Table{"x-message-ttl": int32(1000)})
	body := make([]byte, 100)
	for i := 0; i < b.N; i++ {
		if err := ch.PublishWithContext(context.Background(), "", "q", false, false, amqp.Publishing{Body: body}); err != nil {
			b.Fatal(err)
		}
	}
	sync(b, ch)
	b.ReportAllocs()
	b.ResetTimer()
	f.advance(time.Second)
	b.StopTimer()
	if n := count(b, ch, "q.dlq"); n != b.N {
		b.Fatalf("%d dead-lettered, want %d", n, b.N)
	}
}

// BenchmarkPublishConfirmEach publishes b.N transient messages on a channel
// in confirm mode, waiting for each one's basic.ack before the next.
func BenchmarkPublishConfirmEach(b *testing.B) {
	f := MustServer(b)
	pub := f.MustChannel()
	MustDeclare(b, pub, "bench", nil)
	if err := pub.Confirm(false); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 100)
	b.ReportAllocs()
	for b.Loop() {
		dc, err := pub.PublishWithDeferredConfirmWithContext(context.Background(), "", "bench", false, false, amqp.Publishing{Body: body})
		if err != nil {
			b.Fatal(err)
		}
		if !dc.Wait() {
			b.Fatal("nacked")
		}
	}
}

// BenchmarkPublishConfirmWindow publishes b.N transient messages on a
// channel in confirm mode with up to 1,000 unconfirmed at a time, so that
// confirms queue up behind one another.
func BenchmarkPublishConfirmWindow(b *testing.B) {
	f := MustServer(b)
	pub := f.MustChannel()
	MustDeclare(b, pub, "bench", nil)
	if err := pub.Confirm(false); err != nil {
		b.Fatal(err)
	}
	const window = 1000
	confirms := pub.NotifyPublish(make(chan amqp.Confirmation, window))
	body := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	acked := 0
	for i := range b.N {
		if i-acked >= window {
			if c := <-confirms; !c.Ack {
				b.Fatal("nacked")
			}
			acked++
		}
		if err := pub.PublishWithContext(context.Background(), "", "bench", false, false, amqp.Publishing{Body: body}); err != nil {
			b.Fatal(err)
		}
	}
	for ; acked < b.N; acked++ {
		if c := <-confirms; !c.Ack {
			b.Fatal("nacked")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

package difftest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The length-limit scenarios pin x-max-length with publishers that publish
// at the same time: which of their messages a queue keeps depends on the
// order they arrive in, so the transcript holds what does not: how many
// are acked and nacked, how many are stored, and that exactly the acked
// ones are.

func maxLengthScenarios() []Scenario {
	return []Scenario{
		{Name: "RB9MaxLengthRejectPublishConcurrentPublishers", Rules: []string{"RB-9"}, Run: rb9MaxLengthRejectPublishConcurrentPublishers},
		{Name: "RB9MaxLengthDropHeadConcurrentPublishers", Rules: []string{"RB-9", "RB-12"}, Run: rb9MaxLengthDropHeadConcurrentPublishers},
		{Name: "RB9MaxLengthDropHeadKeepsTheNewest", Rules: []string{"RB-9"}, Run: rb9MaxLengthDropHeadKeepsTheNewest},
		{Name: "RB10MaxLengthPolicyTrimsQueue", Rules: []string{"RB-10", "RB-9"}, Management: true, Run: rb10MaxLengthPolicyTrimsQueue},
	}
}

// confirmedAtOnce is what PublishAtOnce saw: the bodies acked and the
// count nacked.
type confirmedAtOnce struct {
	acked  []string
	nacked int
}

// PublishAtOnce has publishers connections of their own, each in confirm
// mode, publish each messages to queue through the default exchange all
// at the same time, without waiting for a confirm between two, bodies
// "p<publisher>-<n>"; it records one line, the totals of acks and nacks.
// Meanwhile passive declares on a connection of their own watch the
// queue's message count; a second line says whether one saw it over limit.
func (s *S) PublishAtOnce(queue string, publishers, each, limit int) confirmedAtOnce {
	s.tb.Helper()
	wc := s.Conn()
	watcher, err := wc.conn.Channel()
	if err != nil {
		s.tb.Fatalf("open a channel: %v", err)
	}
	type publisher struct {
		ch       *amqp.Channel
		confirms chan amqp.Confirmation
	}
	ps := make([]publisher, publishers)
	for i := range ps {
		c := s.Conn()
		ch, err := c.conn.Channel()
		if err != nil {
			s.tb.Fatalf("open a channel: %v", err)
		}
		if err := ch.Confirm(false); err != nil {
			s.tb.Fatalf("confirm.select: %v", err)
		}
		ps[i] = publisher{ch: ch, confirms: ch.NotifyPublish(make(chan amqp.Confirmation, each))}
	}
	var (
		mu    sync.Mutex
		out   confirmedAtOnce
		errs  []error
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i, p := range ps {
		wg.Go(func() {
			<-start
			for n := range each {
				err := p.ch.PublishWithContext(context.Background(), "", queue, false, false,
					amqp.Publishing{Body: fmt.Appendf(nil, "p%d-%02d", i, n)})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
			for range each {
				select {
				case c := <-p.confirms:
					mu.Lock()
					if c.Ack {
						out.acked = append(out.acked, fmt.Sprintf("p%d-%02d", i, c.DeliveryTag-1))
					} else {
						out.nacked++
					}
					mu.Unlock()
				case <-time.After(arrivalTimeout):
					mu.Lock()
					errs = append(errs, fmt.Errorf("publisher %d: a confirm is missing", i))
					mu.Unlock()
					return
				}
			}
		})
	}
	var (
		done, over atomic.Bool
		ww         sync.WaitGroup
	)
	ww.Go(func() {
		for !done.Load() {
			st, err := watcher.QueueDeclarePassive(queue, false, false, false, false, nil)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			if st.Messages > limit {
				over.Store(true)
			}
		}
	})
	close(start)
	wg.Wait()
	done.Store(true)
	ww.Wait()
	if len(errs) > 0 {
		s.tb.Fatalf("publishing at once: %v", errs)
	}
	s.Note("%d publishers x %d confirmed publishes to %q at once: %d acks, %d nacks",
		publishers, each, queue, len(out.acked), out.nacked)
	s.Note("a passive declare meanwhile saw more than %d messages: %v", limit, over.Load())
	return out
}

// bodies takes every message of queue with basic.get, recording nothing.
func (ch *Ch) bodies(queue string) []string {
	ch.s.tb.Helper()
	var out []string
	for {
		d, ok, err := ch.ch.Get(queue, true)
		if err != nil {
			ch.s.tb.Fatalf("basic.get %s: %v", queue, err)
		}
		if !ok {
			return out
		}
		out = append(out, string(d.Body))
	}
}

// rb9MaxLengthRejectPublishConcurrentPublishers pins RB-9: four publishers
// publishing 50 messages each at once into a queue with x-max-length 20
// and x-overflow reject-publish get 20 acks and 180 nacks between them,
// and the queue holds exactly the 20 acked messages.
func rb9MaxLengthRejectPublishConcurrentPublishers(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-max-length": int32(20), "x-overflow": "reject-publish"})
	got := s.PublishAtOnce(q, 4, 50, 20)
	s.Count(q)
	stored := ch.bodies(q)
	slices.Sort(stored)
	slices.Sort(got.acked)
	s.Note("the messages stored are the ones acked: %v", slices.Equal(stored, got.acked))
}

// rb9MaxLengthDropHeadConcurrentPublishers pins RB-9 and RB-12: four
// publishers publishing 50 messages each at once into a queue with
// x-max-length 20 (drop-head) and a dead-letter exchange are all acked;
// the queue keeps 20, the newest of each publisher, and dead-letters the
// 180 others, reason maxlen.
func rb9MaxLengthDropHeadConcurrentPublishers(s *S) {
	ch := s.Ch()
	dlx, dlq := fanoutDLX(s, ch)
	q := s.Queue("q")
	ch.Queue(q, amqp.Table{"x-max-length": int32(20), "x-dead-letter-exchange": dlx})
	s.PublishAtOnce(q, 4, 50, 20)
	s.Count(q)
	kept := ch.bodies(q)
	byPublisher := map[string][]string{}
	for _, b := range kept {
		p, _, _ := strings.Cut(b, "-")
		byPublisher[p] = append(byPublisher[p], b)
	}
	newest := true
	for p, bs := range byPublisher {
		for i, b := range bs {
			newest = newest && b == fmt.Sprintf("%s-%02d", p, 50-len(bs)+i)
		}
	}
	s.Note("each publisher's messages kept are its newest, in order: %v", newest)
	// Dead-lettering reaches the dead-letter queue on RabbitMQ's own time.
	s.Wait(500 * time.Millisecond)
	s.Count(dlq)
	reasons := map[string]int{}
	for {
		d, ok, err := ch.ch.Get(dlq, true)
		if err != nil {
			s.tb.Fatalf("basic.get %s: %v", dlq, err)
		}
		if !ok {
			break
		}
		death, _ := d.Headers["x-death"].([]any)
		if len(death) == 1 {
			t, _ := death[0].(amqp.Table)
			reasons[fmt.Sprint(t["reason"])]++
		}
	}
	s.Note("dead letters by reason: %v", reasons)
}

// rb9MaxLengthDropHeadKeepsTheNewest pins RB-9: one publisher's 12
// confirmed publishes into a queue with x-max-length 5 are all acked and
// the queue keeps the last 5, in order.
func rb9MaxLengthDropHeadKeepsTheNewest(s *S) {
	q := s.Queue("q")
	ch := s.Ch()
	ch.Queue(q, amqp.Table{"x-max-length": int32(5)})
	ch.Confirm()
	for n := range 12 {
		ch.Publish("", q, Msg{Body: fmt.Sprintf("m%02d", n)})
	}
	ch.GetAll(q)
}

// rb10MaxLengthPolicyTrimsQueue pins RB-10 and RB-9: a policy that sets
// max-length 2 with overflow reject-publish on queues holding five
// messages trims the one whose overflow was drop-head to its two newest
// (RabbitMQ applies the length before the overflow) and leaves the one
// declared with x-overflow reject-publish as it is; both refuse the next
// publish.
func rb10MaxLengthPolicyTrimsQueue(s *S) {
	plain, refusing := s.Queue("plain"), s.Queue("refusing")
	ch := s.Ch()
	ch.Queue(plain, nil)
	ch.Queue(refusing, amqp.Table{"x-overflow": "reject-publish"})
	ch.Confirm()
	for _, b := range []string{"m1", "m2", "m3", "m4", "m5"} {
		ch.Publish("", plain, Msg{Body: b})
		ch.Publish("", refusing, Msg{Body: b})
	}
	p := s.Policy("p")
	s.PutPolicy(p, Policy{Pattern: only(plain, refusing), ApplyTo: "queues",
		Definition: map[string]any{"max-length": 2, "overflow": "reject-publish"}})
	// RabbitMQ applies a policy to its queues on their own time.
	s.Wait(time.Second)
	s.Count(plain)
	s.Count(refusing)
	ch.Publish("", plain, Msg{Body: "m6"})
	ch.Publish("", refusing, Msg{Body: "m6"})
	ch.GetAll(plain)
	ch.GetAll(refusing)
}

package main

// The session scenarios of lapse-bench (group servicebus): sb-sessions-1,
// sb-sessions-100 and sb-sessions-10000, the azservicebus SDK end to end on
// a queue that requires sessions, to hold against sb-sdk, the same without
// sessions, in the same run.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

const (
	// benchSessionReceivers is how many session receivers of
	// sb-sessions-N accept sessions at once, each on a client (a
	// connection) of its own.
	benchSessionReceivers = 16
	// benchAcceptWait bounds one AcceptNextSessionForQueue; a receiver
	// that finds no session tries again until every message came.
	benchAcceptWait = 2 * time.Second
)

// benchSBSessions returns the scenario sb-sessions-N: c.Messages messages
// sent with the SDK in batches as large as they get, message i to session
// "s<i mod sessions>", to a new queue that requires sessions, while
// benchSessionReceivers receivers each accept the next available session
// (AcceptNextSessionForQueue), receive its messages (ReceiveMessages of
// benchSBReceive), complete each from a pool of benchSettlers goroutines
// and close the session, then accept the next. The rate runs from the
// first send to the last completion.
func benchSBSessions(sessions int) func(ctx context.Context, c benchConfig) (benchResult, error) {
	name := fmt.Sprintf("sb-sessions-%d", sessions)
	return func(ctx context.Context, c benchConfig) (benchResult, error) {
		return withAMQP1Session(ctx, c, name, func(s *amqp1Session) (benchResult, error) {
			q, err := s.makeSessionQueue()
			if err != nil {
				return benchResult{}, err
			}
			cs, err := benchConnectionString(c.URL)
			if err != nil {
				return benchResult{}, err
			}
			client, err := azservicebus.NewClientFromConnectionString(cs, nil)
			if err != nil {
				return benchResult{}, err
			}
			defer client.Close(context.WithoutCancel(ctx))
			sender, err := client.NewSender(q, nil)
			if err != nil {
				return benchResult{}, err
			}
			rcv := &benchSessionReceive{q: q, n: c.Messages, sessions: sessions, cs: cs}
			done := make(chan benchConsumed, 1)
			s.wg.Go(func() { done <- rcv.run(s.ctx) })
			first := time.Now()
			batches, err := benchSDKSendSessions(s.ctx, sender, c, c.Messages, sessions)
			sent := time.Now()
			if err != nil {
				s.cancel()
				<-done
				return benchResult{}, err
			}
			got := <-done
			if got.err != nil {
				return benchResult{}, got.err
			}
			notes := fmt.Sprintf("%d sessions of %d messages, %d receivers accepting the next session, ReceiveMessages(%d), CompleteMessage each; %d accepts, %d timed out; batches of %d on average, sending took %s",
				sessions, (c.Messages+sessions-1)/sessions, benchSessionReceivers, benchSBReceive,
				rcv.accepts.Load(), rcv.timeouts.Load(), c.Messages/batches, benchMillis(sent.Sub(first)))
			return benchRate(c.Messages, got.last.Sub(first), notes), nil
		})
	}
}

// makeSessionQueue creates a queue that requires sessions, with the
// service's defaults otherwise.
func (s *amqp1Session) makeSessionQueue() (string, error) {
	name := "lapse.bench." + s.scenario + "." + s.id
	requires := true
	if _, err := s.admin.c.CreateQueue(s.ctx, name, &admin.CreateQueueOptions{Properties: &admin.QueueProperties{RequiresSession: &requires}}); err != nil {
		return "", fmt.Errorf("creating %s: %w", name, err)
	}
	s.queues = append(s.queues, name)
	return name, nil
}

// benchSDKSendSessions sends n messages of c.Size bytes, message i to
// session "s<i mod sessions>", in batches as large as the sender allows,
// and returns how many batches it sent.
func benchSDKSendSessions(ctx context.Context, sender *azservicebus.Sender, c benchConfig, n, sessions int) (int, error) {
	body := benchAMQP1Message(c, 0).Data[0]
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = "s" + strconv.Itoa(i)
	}
	batches := 0
	for i := 0; i < n; {
		b, err := sender.NewMessageBatch(ctx, nil)
		if err != nil {
			return batches, fmt.Errorf("NewMessageBatch: %w", err)
		}
		for i < n {
			err := b.AddMessage(&azservicebus.Message{Body: body, SessionID: &ids[i%sessions]}, nil)
			if errors.Is(err, azservicebus.ErrMessageTooLarge) && b.NumMessages() > 0 {
				break
			}
			if err != nil {
				return batches, fmt.Errorf("AddMessage: %w", err)
			}
			i++
		}
		if err := sender.SendMessageBatch(ctx, b, nil); err != nil {
			return batches, fmt.Errorf("SendMessageBatch: %w", err)
		}
		batches++
	}
	return batches, nil
}

// benchSessionReceive is the receiving side of sb-sessions-N.
type benchSessionReceive struct {
	q           string
	n, sessions int
	cs          string
	got         atomic.Int64
	accepts     atomic.Int64
	timeouts    atomic.Int64
}

// perSession is how many of the n messages session id has.
func (b *benchSessionReceive) perSession(id string) (int, error) {
	i, err := strconv.Atoi(strings.TrimPrefix(id, "s"))
	if err != nil || i < 0 || i >= b.sessions {
		return 0, fmt.Errorf("accepted an unknown session %q", id)
	}
	k := b.n / b.sessions
	if i < b.n%b.sessions {
		k++
	}
	return k, nil
}

// settle is one message to complete on its session's receiver.
type benchSettle struct {
	r    *azservicebus.SessionReceiver
	m    *azservicebus.ReceivedMessage
	done *sync.WaitGroup
}

// run receives every message with benchSessionReceivers SDK clients.
func (b *benchSessionReceive) run(ctx context.Context) benchConsumed {
	return receiveSessions(ctx, b, benchSBReceive,
		func(_ context.Context) (*azservicebus.Client, func(), error) {
			client, err := azservicebus.NewClientFromConnectionString(b.cs, nil)
			if err != nil {
				return nil, nil, err
			}
			return client, func() { client.Close(context.WithoutCancel(ctx)) }, nil
		},
		b.one,
		func(ctx context.Context, s benchSettle) error {
			defer s.done.Done()
			if err := s.r.CompleteMessage(ctx, s.m, nil); err != nil {
				return fmt.Errorf("CompleteMessage: %w", err)
			}
			return nil
		})
}

// receiveSessions is the receiving side of the session scenarios:
// benchSessionReceivers receivers, each on a client of its own (open),
// take sessions with one, which hands each message to settle through a
// channel of queue messages, until every message came; benchSettlers
// goroutines settle them. A settle that fails fails the whole.
func receiveSessions[C, S any](ctx context.Context, b *benchSessionReceive, queue int,
	open func(context.Context) (C, func(), error),
	one func(context.Context, C, chan<- S) error,
	settle func(context.Context, S) error,
) (r benchConsumed) {
	w := newBenchWatch(ctx, "message")
	defer w.stop()
	settles := make(chan S, queue)
	var settlers sync.WaitGroup
	for range benchSettlers {
		settlers.Go(func() {
			for s := range settles {
				if err := settle(w.ctx, s); err != nil {
					w.fail(err)
				} else {
					w.step()
				}
			}
		})
	}
	// all is done when every message was received; receivers then stop
	// waiting for sessions
	all, finish := context.WithCancel(w.ctx)
	defer finish()
	var receivers sync.WaitGroup
	r.first = time.Now()
	for range benchSessionReceivers {
		receivers.Go(func() {
			client, end, err := open(all)
			if err != nil {
				w.fail(err)
				return
			}
			defer end()
			for all.Err() == nil {
				if err := one(all, client, settles); err != nil {
					if all.Err() == nil {
						w.fail(err)
					}
					return
				}
				if b.got.Load() >= int64(b.n) {
					finish()
				}
			}
		})
	}
	receivers.Wait()
	close(settles)
	settlers.Wait()
	r.last = time.Now()
	if err := w.err(); err != nil {
		r.err = fmt.Errorf("receiving: %w", err)
	}
	return r
}

// one accepts the next session, receives all its messages, has them
// completed and closes the session. No session within benchAcceptWait is
// no error.
func (b *benchSessionReceive) one(ctx context.Context, client *azservicebus.Client, settles chan<- benchSettle) error {
	actx, cancel := context.WithTimeout(ctx, benchAcceptWait)
	r, err := client.AcceptNextSessionForQueue(actx, b.q, nil)
	cancel()
	if err != nil {
		var e *azservicebus.Error
		if errors.As(err, &e) && e.Code == azservicebus.CodeTimeout || errors.Is(err, context.DeadlineExceeded) {
			b.timeouts.Add(1)
			return nil
		}
		return fmt.Errorf("AcceptNextSessionForQueue: %w", err)
	}
	b.accepts.Add(1)
	defer r.Close(context.WithoutCancel(ctx))
	want, err := b.perSession(r.SessionID())
	if err != nil {
		return err
	}
	var pending sync.WaitGroup
	for got := 0; got < want; {
		msgs, err := r.ReceiveMessages(ctx, min(benchSBReceive, want-got), nil)
		if err != nil {
			return fmt.Errorf("ReceiveMessages of session %s: %w", r.SessionID(), err)
		}
		for _, m := range msgs {
			pending.Add(1)
			settles <- benchSettle{r: r, m: m, done: &pending}
		}
		got += len(msgs)
		b.got.Add(int64(len(msgs)))
	}
	pending.Wait()
	return nil
}

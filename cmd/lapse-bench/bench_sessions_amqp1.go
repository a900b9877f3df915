package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"time"

	amqp1 "github.com/Azure/go-amqp"
)

// benchSBAMQP1Sessions returns the scenario sb-amqp1-sessions-N, lapse's
// own cost of sessions without the SDK's (azservicebus builds a session's
// links anew with their CBS tokens at each accept): c.Messages messages
// sent as amqp1-send does, message i with the session id (group-id)
// "s<i mod sessions>", to a new queue that requires sessions, while
// benchSessionReceivers session links on the receiving connection, each on
// an AMQP session of its own, attach with the session filter null (the
// next available session, com.microsoft:timeout 2 s), take the session's
// messages with a credit of benchCredit, accept each from a pool of
// benchSettlers goroutines, detach, and attach again. To hold against
// amqp1-roundtrip in the same run. The rate runs from the first send to
// the last accept.
func benchSBAMQP1Sessions(sessions int) func(ctx context.Context, c benchConfig) (benchResult, error) {
	name := fmt.Sprintf("sb-amqp1-sessions-%d", sessions)
	return func(ctx context.Context, c benchConfig) (benchResult, error) {
		return withAMQP1Session(ctx, c, name, func(s *amqp1Session) (benchResult, error) {
			q, err := s.makeSessionQueue()
			if err != nil {
				return benchResult{}, err
			}
			rcv := &benchSessionReceive{q: q, n: c.Messages, sessions: sessions}
			done := make(chan benchConsumed, 1)
			s.wg.Go(func() { done <- rcv.runAMQP1(s.ctx, s.conConn) })
			ids := make([]string, sessions)
			for i := range ids {
				ids[i] = "s" + strconv.Itoa(i)
			}
			pt, err := s.sendEach(q, func(i int) *amqp1.Message {
				m := benchAMQP1Message(c, 0)
				m.Properties = &amqp1.MessageProperties{GroupID: &ids[i%sessions]}
				return m
			}, c.Messages)
			if err != nil {
				s.cancel()
				<-done
				return benchResult{}, err
			}
			got := <-done
			if got.err != nil {
				return benchResult{}, got.err
			}
			notes := s.notes("%d sessions of %d messages, %d session links accepting the next session, credit %d, accept each from %d goroutines; %d accepts, %d timed out; sending took %s",
				sessions, (c.Messages+sessions-1)/sessions, benchSessionReceivers, benchCredit, benchSettlers,
				rcv.accepts.Load(), rcv.timeouts.Load(), benchMillis(pt.lastConfirm.Sub(pt.first)))
			return benchRate(c.Messages, got.last.Sub(pt.first), notes), nil
		})
	}
}

// benchAccept is one message to accept on its session link.
type benchAccept struct {
	rcv  *amqp1.Receiver
	cr   *benchCreditor
	m    *amqp1.Message
	done *sync.WaitGroup
}

// runAMQP1 receives every message with benchSessionReceivers session links
// of conn, each on an AMQP session of its own.
func (b *benchSessionReceive) runAMQP1(ctx context.Context, conn *amqp1.Conn) benchConsumed {
	return receiveSessions(ctx, b, benchCredit,
		func(ctx context.Context) (*amqp1.Session, func(), error) {
			sess, err := conn.NewSession(ctx, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("beginning a session: %w", err)
			}
			return sess, func() { benchEnd(sess) }, nil
		},
		b.oneAMQP1,
		func(ctx context.Context, a benchAccept) error {
			defer a.done.Done()
			if err := a.rcv.AcceptMessage(ctx, a.m); err != nil {
				return fmt.Errorf("accepting: %w", err)
			}
			return a.cr.settled()
		})
}

// benchAcceptTimeoutMs is the com.microsoft:timeout of a session link.
var benchAcceptTimeoutMs = uint32(benchAcceptWait / time.Millisecond)

// oneAMQP1 attaches a link to the next session, takes its messages, has
// them accepted and detaches. No session within benchAcceptWait is no
// error.
func (b *benchSessionReceive) oneAMQP1(ctx context.Context, sess *amqp1.Session, accepts chan<- benchAccept) error {
	rcv, err := sess.NewReceiver(ctx, b.q, &amqp1.ReceiverOptions{
		Credit: -1, SettlementMode: amqp1.ReceiverSettleModeSecond.Ptr(),
		Filters:    []amqp1.LinkFilter{amqp1.NewLinkFilter("com.microsoft:session-filter", 0x137000000C, nil)},
		Properties: map[string]any{"com.microsoft:timeout": benchAcceptTimeoutMs},
	})
	if err != nil {
		var e *amqp1.Error
		if errors.As(err, &e) && e.Condition == "com.microsoft:timeout" {
			b.timeouts.Add(1)
			return nil
		}
		return fmt.Errorf("attaching a session link: %w", err)
	}
	b.accepts.Add(1)
	defer rcv.Close(context.WithoutCancel(ctx))
	id, _ := rcv.LinkSourceFilterValue("com.microsoft:session-filter").(string)
	want, err := b.perSession(id)
	if err != nil {
		return err
	}
	cr := &benchCreditor{rcv: rcv}
	if err := cr.give(min(benchCredit, want)); err != nil {
		return err
	}
	var pending sync.WaitGroup
	for got := 0; got < want; got++ {
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			return fmt.Errorf("receiving from session %s: %w", id, err)
		}
		cr.received()
		pending.Add(1)
		accepts <- benchAccept{rcv: rcv, cr: cr, m: m, done: &pending}
		b.got.Add(1)
	}
	pending.Wait()
	return nil
}

package main

// The AMQP 1.0 scenarios of lapse-bench, with go-amqp: the same load
// against a Service Bus (lapse; --amqp1-auth cbs) and RabbitMQ's
// rabbitmq_amqp1_0 plugin (--amqp1-auth plain). What differs between the
// two is kept in amqp1Session: how it logs in, how it makes its queues and
// names them on links, and the receiver settle mode.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync"
	"time"

	amqp1 "github.com/Azure/go-amqp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lapse-emulator/lapse/servicebus"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

const (
	// benchCredit is the link credit of the AMQP 1.0 receivers.
	benchCredit = 100
	// benchSettlers is how many goroutines of an AMQP 1.0 or Service Bus
	// receiver settle messages at once: as many as the credit, so that no
	// message waits for another's settlement, as with a client that
	// handles each message on its own. In peek-lock each settlement waits
	// for the broker's disposition, which would otherwise bound the rate
	// (8 settlers halve lapse's; RabbitMQ's, settle mode first, hardly moves).
	benchSettlers = benchCredit
	// benchTokenTTL is how long the CBS tokens of the scenarios last.
	benchTokenTTL = time.Hour
)

// benchAMQP1Send is amqp1-send: c.Messages messages sent unsettled to a new
// queue without a receiver, at most benchWindow of them awaiting their
// disposition; the rate runs from the first send to the last disposition.
func benchAMQP1Send(ctx context.Context, c benchConfig) (benchResult, error) {
	return withAMQP1Session(ctx, c, "amqp1-send", func(s *amqp1Session) (benchResult, error) {
		q, err := s.makeQueue("", false)
		if err != nil {
			return benchResult{}, err
		}
		pt, err := s.send(q, benchAMQP1Message(c, 0), c.Messages)
		if err != nil {
			return benchResult{}, err
		}
		return benchRate(c.Messages, pt.lastConfirm.Sub(pt.first), s.notes("unsettled, window %d", benchWindow)), nil
	})
}

// benchAMQP1ReceiveComplete is amqp1-receive-complete: c.Messages messages
// sent to a new queue first (not timed), then received with a credit of
// benchCredit and accepted each; the rate runs from the receiver's attach
// to the last accept.
func benchAMQP1ReceiveComplete(ctx context.Context, c benchConfig) (benchResult, error) {
	return withAMQP1Session(ctx, c, "amqp1-receive-complete", func(s *amqp1Session) (benchResult, error) {
		q, err := s.makeQueue("", false)
		if err != nil {
			return benchResult{}, err
		}
		if _, err := s.send(q, benchAMQP1Message(c, 0), c.Messages); err != nil {
			return benchResult{}, err
		}
		got := s.receive(q, c.Messages)
		if got.err != nil {
			return benchResult{}, got.err
		}
		return benchRate(c.Messages, got.last.Sub(got.first), s.notes("credit %d, accept each from %d goroutines%s",
			benchCredit, benchSettlers, got.kickNote())), nil
	})
}

// benchAMQP1Roundtrip is amqp1-roundtrip: amqp1-send with a receiver of
// amqp1-receive-complete on another connection taking the messages at the
// same time; the rate runs from the first send to the last accept.
func benchAMQP1Roundtrip(ctx context.Context, c benchConfig) (benchResult, error) {
	return withAMQP1Session(ctx, c, "amqp1-roundtrip", func(s *amqp1Session) (benchResult, error) {
		q, err := s.makeQueue("", false)
		if err != nil {
			return benchResult{}, err
		}
		done := make(chan benchConsumed, 1)
		s.wg.Go(func() { done <- s.receive(q, c.Messages) })
		pt, err := s.send(q, benchAMQP1Message(c, 0), c.Messages)
		if err != nil {
			s.cancel() // the receiver waits for messages that will not come
			<-done
			return benchResult{}, err
		}
		got := <-done
		if got.err != nil {
			return benchResult{}, got.err
		}
		return benchRate(c.Messages, got.last.Sub(pt.first), s.notes("unsettled, window %d; credit %d, accept each from %d goroutines%s",
			benchWindow, benchCredit, benchSettlers, got.kickNote())), nil
	})
}

// benchAMQP1Message is the message the AMQP 1.0 scenarios send: one data
// section of c.Size bytes, durable (a Service Bus keeps every message; the
// plugin then stores them as persistent), with ttl when above 0.
func benchAMQP1Message(c benchConfig, ttl time.Duration) *amqp1.Message {
	return &amqp1.Message{
		Header: &amqp1.MessageHeader{Durable: true, TTL: ttl},
		Data:   [][]byte{bytes.Repeat([]byte("x"), c.Size)},
	}
}

// amqp1Session is one run of an AMQP 1.0 or Service Bus scenario: a sending
// and a receiving connection, what makes and deletes its queues (the
// administration API of a Service Bus, an AMQP 0-9-1 connection to
// RabbitMQ), and the queues it made.
type amqp1Session struct {
	c                benchConfig
	scenario, id     string
	sb               bool            // a Service Bus: CBS, the administration API, peek-lock
	ctx              context.Context // ends when the run does
	cancel           context.CancelFunc
	pubConn, conConn *amqp1.Conn
	admin            *benchAdmin      // sb
	rabbit           *amqp.Connection // !sb
	queues           []string
	wg               sync.WaitGroup
}

// withAMQP1Session runs f in a new session and closes it, deleting its
// queues, however f ends.
func withAMQP1Session(ctx context.Context, c benchConfig, scenario string, f func(*amqp1Session) (benchResult, error)) (benchResult, error) {
	s := &amqp1Session{c: c, scenario: scenario, id: fmt.Sprintf("%08x", rand.Uint32()), sb: c.AMQP1Auth == benchAuthCBS}
	s.ctx, s.cancel = context.WithCancel(ctx)
	err := s.open()
	var r benchResult
	if err == nil {
		r, err = f(s)
	}
	if cerr := s.close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return r, err
}

// open connects the session.
func (s *amqp1Session) open() (err error) {
	if s.sb {
		if s.admin, err = newBenchAdmin(s.c.AdminURL); err != nil {
			return err
		}
	} else if s.rabbit, err = benchDial(s.c.URL, s.scenario+" declarations"); err != nil {
		return err
	}
	if s.pubConn, err = benchAMQP1Dial(s.ctx, s.c, s.scenario+" sender"); err != nil {
		return err
	}
	s.conConn, err = benchAMQP1Dial(s.ctx, s.c, s.scenario+" receiver")
	return err
}

// close stops what the session started, deletes its queues and closes its
// connections.
func (s *amqp1Session) close() error {
	s.cancel()
	s.wg.Wait()
	var errs []error
	if err := s.deleteQueues(); err != nil {
		errs = append(errs, fmt.Errorf("deleting the queues: %w", err))
	}
	for _, conn := range []*amqp1.Conn{s.conConn, s.pubConn} {
		if conn != nil {
			conn.Close() // an interrupted run leaves it closed already
		}
	}
	if s.rabbit != nil && !s.rabbit.IsClosed() {
		errs = append(errs, s.rabbit.Close())
	}
	if s.admin != nil {
		s.admin.close()
	}
	return errors.Join(errs...)
}

// makeQueue makes the queue lapse.bench.<scenario>.<id>, followed by
// ".<role>" when role is not empty, and returns its address on links. On a
// Service Bus, deadLetterOnExpiry sets DeadLetteringOnMessageExpiration;
// RabbitMQ's queue is durable.
func (s *amqp1Session) makeQueue(role string, deadLetterOnExpiry bool) (string, error) {
	name := "lapse.bench." + s.scenario + "." + s.id
	if role != "" {
		name += "." + role
	}
	if s.sb {
		if err := s.admin.createQueue(s.ctx, name, deadLetterOnExpiry); err != nil {
			return "", fmt.Errorf("creating %s: %w", name, err)
		}
		s.queues = append(s.queues, name)
		return name, nil
	}
	ch, err := s.rabbit.Channel()
	if err != nil {
		return "", err
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		return "", fmt.Errorf("declaring %s: %w", name, err)
	}
	s.queues = append(s.queues, name)
	// The plugin's address of an existing queue (its README, Routing and
	// Addressing); /queue/NAME would declare one.
	return "/amq/queue/" + name, nil
}

// deleteQueues deletes the session's queues, with a connection of its own
// to RabbitMQ if an interruption closed the session's.
func (s *amqp1Session) deleteQueues() error {
	if len(s.queues) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), benchStall)
	defer cancel()
	if s.sb {
		for _, q := range s.queues {
			if err := s.admin.deleteQueue(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}
	conn := s.rabbit
	if conn.IsClosed() {
		var err error
		if conn, err = benchDial(s.c.URL, s.scenario+" cleanup"); err != nil {
			return err
		}
		defer conn.Close()
	}
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	for _, q := range s.queues {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			return err
		}
	}
	return nil
}

// notes are a scenario's notes followed by the broker's ways.
func (s *amqp1Session) notes(format string, args ...any) string {
	ways := "SASL PLAIN, durable queue, receiver settle mode first"
	if s.sb {
		ways = "CBS, peek-lock (receiver settle mode second)"
	}
	return fmt.Sprintf(format, args...) + "; " + ways
}

// send sends n copies of msg to addr unsettled on a new link of the sending
// connection: one goroutine sends without waiting (SendWithReceipt) while
// another waits for the dispositions in order, at most benchWindow apart.
func (s *amqp1Session) send(addr string, msg *amqp1.Message, n int) (benchPublishTimes, error) {
	return s.sendEach(addr, func(int) *amqp1.Message { return msg }, n)
}

// sendEach is send with message i made by msg.
func (s *amqp1Session) sendEach(addr string, msg func(i int) *amqp1.Message, n int) (benchPublishTimes, error) {
	var t benchPublishTimes
	w := newBenchWatch(s.ctx, "disposition")
	defer w.stop()
	ctx := w.ctx
	sess, err := s.pubConn.NewSession(ctx, nil)
	if err != nil {
		return t, fmt.Errorf("beginning a session: %w", err)
	}
	defer benchEnd(sess)
	snd, err := sess.NewSender(ctx, addr, &amqp1.SenderOptions{SettlementMode: amqp1.SenderSettleModeUnsettled.Ptr()})
	if err != nil {
		return t, fmt.Errorf("attaching a sender to %s: %w", addr, err)
	}
	receipts := make(chan amqp1.SendReceipt, benchWindow)
	waited := make(chan error, 1)
	go func() {
		var err error
		for r := range receipts {
			if err != nil {
				continue // drain: the sender stops at ctx's end
			}
			var st amqp1.DeliveryState
			if st, err = r.Wait(ctx); err == nil {
				if _, ok := st.(*amqp1.StateAccepted); !ok {
					err = fmt.Errorf("the broker settled a message with %T %+v", st, st)
				}
			}
			if err != nil {
				w.fail(err)
				continue
			}
			w.step()
		}
		t.lastConfirm = time.Now()
		waited <- err
	}()
	t.first = time.Now()
	for i := range n {
		r, err := snd.SendWithReceipt(ctx, msg(i), nil)
		if err != nil {
			w.fail(err)
			break
		}
		receipts <- r
	}
	t.lastSent = time.Now()
	close(receipts)
	err = <-waited
	if err == nil {
		err = w.err() // interrupted, or the sends stalled
	}
	if err != nil {
		return t, fmt.Errorf("sending: %w", err)
	}
	return t, nil
}

// receive takes n messages from addr on a new link of the receiving
// connection with a credit of benchCredit (see benchCreditor), accepting
// each from one of benchSettlers goroutines. first is when the receiver
// began to attach, last when the last accept returned.
func (s *amqp1Session) receive(addr string, n int) (r benchConsumed) {
	w := newBenchWatch(s.ctx, "message")
	defer w.stop()
	ctx := w.ctx
	r.first = time.Now()
	sess, err := s.conConn.NewSession(ctx, nil)
	if err != nil {
		r.err = fmt.Errorf("beginning a session: %w", err)
		return r
	}
	defer benchEnd(sess)
	mode := amqp1.ReceiverSettleModeFirst
	if s.sb {
		mode = amqp1.ReceiverSettleModeSecond
	}
	rcv, err := sess.NewReceiver(ctx, addr, &amqp1.ReceiverOptions{Credit: -1, SettlementMode: mode.Ptr()})
	if err != nil {
		r.err = fmt.Errorf("attaching a receiver to %s: %w", addr, err)
		return r
	}
	cr := &benchCreditor{rcv: rcv}
	if err := cr.give(benchCredit); err != nil {
		r.err = err
		return r
	}
	msgs := make(chan *amqp1.Message, benchCredit)
	var settlers sync.WaitGroup
	for range benchSettlers {
		settlers.Go(func() {
			for m := range msgs {
				if err := rcv.AcceptMessage(ctx, m); err != nil {
					w.fail(fmt.Errorf("accepting: %w", err))
					continue
				}
				w.step()
				if err := cr.settled(); err != nil {
					w.fail(err)
				}
			}
		})
	}
	for got := 0; got < n; {
		m := rcv.Prefetched()
		if m == nil {
			rctx, cancel := context.WithTimeout(ctx, benchKick)
			m, err = rcv.Receive(rctx, nil)
			cancel()
			if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				err = cr.kick()
			}
			if err != nil {
				w.fail(err)
				break
			}
			if m == nil {
				continue
			}
		}
		cr.received()
		got++
		msgs <- m
	}
	close(msgs)
	settlers.Wait()
	r.last = time.Now()
	r.kicks = cr.kicks
	if err := w.err(); err != nil {
		r.err = fmt.Errorf("receiving: %w", err)
	}
	return r
}

// benchEnd ends a session and with it its links. The links are not closed
// one by one: RabbitMQ before 4.0 answers a closing detach with a
// non-closing one, and go-amqp then waits for ever (rabbitmq-server#2594,
// go-amqp#310).
func benchEnd(sess *amqp1.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sess.Close(ctx)
}

// benchAMQP1Dial connects to c.URL, naming the connection after the
// scenario; on a Service Bus it logs in with SASL ANONYMOUS and puts a CBS
// token for the whole namespace, else with SASL PLAIN as the URL's user.
func benchAMQP1Dial(ctx context.Context, c benchConfig, name string) (*amqp1.Conn, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, err
	}
	opts := &amqp1.ConnOptions{Properties: map[string]any{"connection_name": "lapse-bench " + name}}
	if c.AMQP1Auth == benchAuthCBS {
		u.User = nil // go-amqp would log in with PLAIN
		opts.SASLType = amqp1.SASLTypeAnonymous()
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := amqp1.Dial(dctx, u.String(), opts)
	if err != nil {
		return nil, err
	}
	if c.AMQP1Auth == benchAuthCBS {
		if err := benchPutToken(dctx, conn, "sb://"+u.Host+"/"); err != nil {
			conn.Close()
			return nil, fmt.Errorf("CBS put-token: %w", err)
		}
	}
	return conn, nil
}

// benchPutToken puts a token for audience on $cbs, signed with the key of
// the emulator's connection string, as the SDKs do (servicebus.md §2.2).
func benchPutToken(ctx context.Context, conn *amqp1.Conn, audience string) error {
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		return err
	}
	defer sess.Close(ctx)
	snd, err := sess.NewSender(ctx, "$cbs", nil)
	if err != nil {
		return err
	}
	reply := fmt.Sprintf("cbs-lapse-bench-%08x", rand.Uint32())
	rcv, err := sess.NewReceiver(ctx, "$cbs", &amqp1.ReceiverOptions{TargetAddress: reply})
	if err != nil {
		return err
	}
	expiry := time.Now().Add(benchTokenTTL)
	req := &amqp1.Message{
		Properties: &amqp1.MessageProperties{MessageID: reply, ReplyTo: &reply},
		ApplicationProperties: map[string]any{
			"operation":  "put-token",
			"type":       "servicebus.windows.net:sastoken",
			"name":       audience,
			"expiration": expiry.Unix(),
		},
		Value: sas.Sign(servicebus.DefaultKey, audience, expiry),
	}
	if err := snd.Send(ctx, req, nil); err != nil {
		return err
	}
	resp, err := rcv.Receive(ctx, nil)
	if err != nil {
		return err
	}
	if err := rcv.AcceptMessage(ctx, resp); err != nil {
		return err
	}
	code, desc := resp.ApplicationProperties["status-code"], resp.ApplicationProperties["status-description"]
	if code != int32(200) && code != int32(202) {
		return fmt.Errorf("status %v: %v", code, desc)
	}
	return nil
}

// benchAMQP1Preflight connects to c.URL as the AMQP 1.0 scenarios do, and
// on a Service Bus checks the administration API, and the control API when
// the servicebus scenarios run.
func benchAMQP1Preflight(ctx context.Context, c benchConfig, sbScenarios bool) error {
	conn, err := benchAMQP1Dial(ctx, c, "preflight")
	if err != nil {
		return fmt.Errorf("connecting to --url with AMQP 1.0 (--amqp1-auth %s): %w", c.AMQP1Auth, err)
	}
	conn.Close()
	if c.AMQP1Auth == benchAuthPlain {
		conn, err := benchDial(c.URL, "preflight")
		if err != nil {
			return fmt.Errorf("connecting to --url with AMQP 0-9-1, which declares the queues: %w", err)
		}
		return conn.Close()
	}
	a, err := newBenchAdmin(c.AdminURL)
	if err != nil {
		return err
	}
	defer a.close()
	if _, err := a.c.GetNamespaceProperties(ctx, nil); err != nil {
		return fmt.Errorf("--servicebus-admin-url: %w", err)
	}
	if sbScenarios {
		ctl := newBenchControl(c.ControlURL)
		defer ctl.close()
		if err := ctl.Do(ctx, "GET", "/healthz", nil, nil); err != nil {
			return fmt.Errorf("--control-url: %w", err)
		}
	}
	return nil
}

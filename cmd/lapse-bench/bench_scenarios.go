package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	// benchStall is how long a scenario waits for a confirm or a delivery
	// before it gives up.
	benchStall = 30 * time.Second
	// benchWindow is the most unconfirmed messages of a publisher in the
	// scenarios with a confirm window.
	benchWindow = 1000
	// benchPrefetch is the prefetch count of consumers that ack.
	benchPrefetch = 100
	// benchTTL is the queue message TTL of ttl-deadletter.
	benchTTL = time.Second
)

// benchScenario is one load of `lapse-bench`; run returns its figure
// without the scenario's name. A scenario that runs once ignores --runs.
type benchScenario struct {
	name string
	run  func(ctx context.Context, c benchConfig) (benchResult, error)
	once bool
	kind benchKind
}

// benchKind is the protocol a scenario speaks, which says what the
// preflight checks and which group of --scenarios it is in.
type benchKind uint8

const (
	benchAMQP091    benchKind = iota + 1 // amqp091-go, any AMQP 0-9-1 broker
	benchAMQP1                           // go-amqp, lapse or RabbitMQ's AMQP 1.0 plugin
	benchServiceBus                      // lapse's Service Bus only
	benchCosmos                          // azcosmos, any Cosmos DB endpoint
)

// benchScenarios lists the scenarios in the order they run.
func benchScenarios() []benchScenario {
	return []benchScenario{
		{"transient-autoack", func(ctx context.Context, c benchConfig) (benchResult, error) {
			return benchThroughput(ctx, c, "transient-autoack", true, false)
		}, false, benchAMQP091},
		{"manual-ack-prefetch100", func(ctx context.Context, c benchConfig) (benchResult, error) {
			return benchThroughput(ctx, c, "manual-ack-prefetch100", false, false)
		}, false, benchAMQP091},
		{"persistent-confirms", func(ctx context.Context, c benchConfig) (benchResult, error) {
			return benchThroughput(ctx, c, "persistent-confirms", false, true)
		}, false, benchAMQP091},
		{"persistent-confirm-each", benchConfirmEach, false, benchAMQP091},
		{"ttl-deadletter", benchDeadLetter, false, benchAMQP091},
		{"ttl-deadletter-consumed", benchDeadLetterConsumed, false, benchAMQP091},
		// A broker keeps the memory a run freed and fills it in the next,
		// which would then grow by nothing.
		{"memory", benchMemory, true, benchAMQP091},
		{"amqp1-send", benchAMQP1Send, false, benchAMQP1},
		{"amqp1-receive-complete", benchAMQP1ReceiveComplete, false, benchAMQP1},
		{"amqp1-roundtrip", benchAMQP1Roundtrip, false, benchAMQP1},
		{"sb-sdk", benchSBSDK, false, benchServiceBus},
		{"sb-ttl-deadletter", benchSBDeadLetter, false, benchServiceBus},
		{"sb-ttl-deadletter-realtime", benchSBDeadLetterRealTime, false, benchServiceBus},
		{"sb-sessions-1", benchSBSessions(1), false, benchServiceBus},
		{"sb-sessions-100", benchSBSessions(100), false, benchServiceBus},
		{"sb-sessions-10000", benchSBSessions(10000), false, benchServiceBus},
		{"sb-amqp1-sessions-1", benchSBAMQP1Sessions(1), false, benchServiceBus},
		{"sb-amqp1-sessions-100", benchSBAMQP1Sessions(100), false, benchServiceBus},
		{"sb-amqp1-sessions-10000", benchSBAMQP1Sessions(10000), false, benchServiceBus},
		{"cosmos-create", benchCosmosCreate, false, benchCosmos},
		{"cosmos-read", benchCosmosRead, false, benchCosmos},
		{"cosmos-query-id", benchCosmosQueryByID, false, benchCosmos},
		{"cosmos-query-pk", benchCosmosQueryByPK, false, benchCosmos},
		{"cosmos-upsert", benchCosmosUpsert, false, benchCosmos},
		{"cosmos-replace", benchCosmosReplace, false, benchCosmos},
	}
}

// benchThroughput publishes c.Messages messages to a new queue while a
// consumer on another connection takes them, with autoAck or else acking
// each with a prefetch of benchPrefetch. With persistent, the queue is
// durable, the messages persistent and confirmed within benchWindow. The
// rate runs from the first publish to the last delivery (and confirm).
func benchThroughput(ctx context.Context, c benchConfig, scenario string, autoAck, persistent bool) (benchResult, error) {
	window := 0
	if persistent {
		window = benchWindow
	}
	return withBenchSession(ctx, c, scenario, func(s *benchSession) (benchResult, error) {
		q, err := s.declare("", persistent, nil)
		if err != nil {
			return benchResult{}, err
		}
		done, err := s.consume(q, c.Messages, autoAck)
		if err != nil {
			return benchResult{}, err
		}
		from := readCPU(c.ServerPID)
		pt, err := s.publish(q, benchMessage(c, persistent), c.Messages, window)
		if err != nil {
			return benchResult{}, err
		}
		got := <-done
		if got.err != nil {
			return benchResult{}, got.err
		}
		to := readCPU(c.ServerPID)
		end := got.last
		if pt.lastConfirm.After(end) {
			end = pt.lastConfirm
		}
		notes := "autoAck"
		if !autoAck {
			notes = fmt.Sprintf("ack each, prefetch %d", benchPrefetch)
		}
		if persistent {
			notes = fmt.Sprintf("durable, confirm window %d, %s", window, notes)
		}
		r := benchRate(c.Messages, end.Sub(pt.first), notes)
		if persistent {
			r.cpuPerOp(from, to, c.Messages)
		}
		return r, nil
	})
}

// benchConfirmEach publishes a tenth of c.Messages persistent messages to
// a durable queue without consumer, waiting for each one's confirm.
func benchConfirmEach(ctx context.Context, c benchConfig) (benchResult, error) {
	n := max(1, c.Messages/10)
	return withBenchSession(ctx, c, "persistent-confirm-each", func(s *benchSession) (benchResult, error) {
		q, err := s.declare("", true, nil)
		if err != nil {
			return benchResult{}, err
		}
		from := readCPU(c.ServerPID)
		pt, err := s.publish(q, benchMessage(c, true), n, 1)
		if err != nil {
			return benchResult{}, err
		}
		r := benchRate(n, pt.lastConfirm.Sub(pt.first), "durable, no consumer")
		r.cpuPerOp(from, readCPU(c.ServerPID), n)
		return r, nil
	})
}

// benchDeadLetter is ttl-deadletter: how long after the last message's
// expiry all messages are in the dead-letter queue.
func benchDeadLetter(ctx context.Context, c benchConfig) (benchResult, error) {
	return benchDeadLetterLoad(ctx, c, "ttl-deadletter", false)
}

// benchDeadLetterConsumed is ttl-deadletter with a consumer (autoAck) on the
// dead-letter queue: the lag runs until the client has received the last
// dead letter, which decoding x-death headers makes client-bound.
func benchDeadLetterConsumed(ctx context.Context, c benchConfig) (benchResult, error) {
	return benchDeadLetterLoad(ctx, c, "ttl-deadletter-consumed", true)
}

// benchDeadLetterLoad publishes c.Messages messages to a queue whose
// message TTL is benchTTL and whose dead-letter exchange routes to a
// dead-letter queue, and reports how long after the last message's expiry
// (its publish plus benchTTL) all of them were dead-lettered: in the
// dead-letter queue (polled with passive declares, every millisecond), or
// with consume, received by a consumer of it.
func benchDeadLetterLoad(ctx context.Context, c benchConfig, scenario string, consume bool) (benchResult, error) {
	return withBenchSession(ctx, c, scenario, func(s *benchSession) (benchResult, error) {
		dlq, err := s.declare("dlq", false, nil)
		if err != nil {
			return benchResult{}, err
		}
		q, err := s.declare("", false, amqp.Table{
			"x-message-ttl":             int32(benchTTL.Milliseconds()),
			"x-dead-letter-exchange":    "",
			"x-dead-letter-routing-key": dlq,
		})
		if err != nil {
			return benchResult{}, err
		}
		var done <-chan benchConsumed
		if consume {
			if done, err = s.consume(dlq, c.Messages, true); err != nil {
				return benchResult{}, err
			}
		}
		pt, err := s.publish(q, benchMessage(c, false), c.Messages, benchWindow)
		if err != nil {
			return benchResult{}, err
		}
		var first, last time.Time
		if consume {
			got := <-done
			if got.err != nil {
				return benchResult{}, got.err
			}
			first, last = got.first, got.last
		} else {
			// Poll from a little before the last expiry.
			time.Sleep(time.Until(pt.lastSent.Add(benchTTL - 20*time.Millisecond)))
			for {
				st, err := s.pub.QueueDeclarePassive(dlq, false, false, false, false, nil)
				if err != nil {
					return benchResult{}, err
				}
				if st.Messages >= c.Messages {
					last = time.Now()
					break
				}
				if time.Since(pt.lastSent) > benchTTL+benchStall {
					return benchResult{}, fmt.Errorf("%d of %d messages dead-lettered after %s", st.Messages, c.Messages, benchStall)
				}
				time.Sleep(time.Millisecond)
			}
			first = pt.first.Add(benchTTL)
		}
		lag := float64(last.Sub(pt.lastSent)-benchTTL) / float64(time.Millisecond)
		notes := fmt.Sprintf("after the last expiry, all in the dead-letter queue; publishing took %s",
			benchMillis(pt.lastConfirm.Sub(pt.first)))
		if consume {
			notes = fmt.Sprintf("after the last expiry, all received by a consumer; dead letters over %s, publishing took %s",
				benchMillis(last.Sub(first)), benchMillis(pt.lastConfirm.Sub(pt.first)))
		}
		return benchResult{
			Messages: c.Messages,
			Seconds:  last.Sub(pt.first).Seconds(),
			Value:    &lag,
			Unit:     "ms",
			Notes:    notes,
		}, nil
	})
}

// benchMemory publishes c.Messages transient messages with confirms to a
// queue without consumer and reports the growth of the broker's resident
// memory per message, when --server-pid names the broker.
func benchMemory(ctx context.Context, c benchConfig) (benchResult, error) {
	return withBenchSession(ctx, c, "memory", func(s *benchSession) (benchResult, error) {
		var before int64
		var err error
		if c.ServerPID > 0 {
			if before, _, err = settledRSS(s.ctx, c.ServerPID); err != nil {
				return benchResult{}, err
			}
		}
		q, err := s.declare("", false, nil)
		if err != nil {
			return benchResult{}, err
		}
		pt, err := s.publish(q, benchMessage(c, false), c.Messages, benchWindow)
		if err != nil {
			return benchResult{}, err
		}
		st, err := s.pub.QueueDeclarePassive(q, false, false, false, false, nil)
		if err != nil {
			return benchResult{}, err
		}
		if st.Messages != c.Messages {
			return benchResult{}, fmt.Errorf("queue %s holds %d messages, not %d", q, st.Messages, c.Messages)
		}
		r := benchResult{Messages: c.Messages, Seconds: pt.lastConfirm.Sub(pt.first).Seconds(), Unit: "bytes/msg"}
		if c.ServerPID == 0 {
			r.Notes = "n/a without --server-pid"
			return r, nil
		}
		after, settled, err := settledRSS(s.ctx, c.ServerPID)
		if err != nil {
			return benchResult{}, err
		}
		perMsg := float64(after-before) / float64(c.Messages)
		r.Value = &perMsg
		r.Notes = fmt.Sprintf("RSS %.1f MiB to %.1f MiB", float64(before)/(1<<20), float64(after)/(1<<20))
		if !settled {
			r.Notes += " (still moving after 10 s)"
		}
		return r, nil
	})
}

// benchMessage is the message the scenarios send: c.Size bytes, persistent
// or transient.
func benchMessage(c benchConfig, persistent bool) amqp.Publishing {
	mode := amqp.Transient
	if persistent {
		mode = amqp.Persistent
	}
	return amqp.Publishing{DeliveryMode: mode, Body: bytes.Repeat([]byte("x"), c.Size)}
}

// benchRate is the result of n messages in d.
func benchRate(n int, d time.Duration, notes string) benchResult {
	rate := float64(n) / d.Seconds()
	return benchResult{Messages: n, Seconds: d.Seconds(), Value: &rate, Unit: "msg/s", Notes: notes}
}

// benchMillis formats d in milliseconds.
func benchMillis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// benchDial connects to url, naming the connection so that it can be told
// apart in the broker's management UI.
func benchDial(url, name string) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("lapse-bench " + name)
	return amqp.DialConfig(url, amqp.Config{Properties: props, Dial: amqp.DefaultDial(10 * time.Second)})
}

// benchSession is one run of a scenario: a publishing and a consuming
// connection with a channel each, and the queues it declared.
type benchSession struct {
	url, scenario, id string
	ctx               context.Context // ends when the run does
	cancel            context.CancelFunc
	stop              func() bool // cancels the closing of the connections when ctx ends
	connsClosed       chan struct{}
	pubConn, conConn  *amqp.Connection
	pub, con          *amqp.Channel
	queues            []string
	consumers         sync.WaitGroup
}

// withBenchSession runs f in a new session and closes it, deleting its
// queues, however f ends.
func withBenchSession(ctx context.Context, c benchConfig, scenario string, f func(*benchSession) (benchResult, error)) (benchResult, error) {
	s := &benchSession{url: c.URL, scenario: scenario, id: fmt.Sprintf("%08x", rand.Uint32())}
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

// open connects the session and opens its channels.
func (s *benchSession) open() (err error) {
	if s.pubConn, err = benchDial(s.url, s.scenario+" publisher"); err != nil {
		return err
	}
	if s.conConn, err = benchDial(s.url, s.scenario+" consumer"); err != nil {
		return err
	}
	// Closing the connections unblocks whatever waits on the broker.
	s.connsClosed = make(chan struct{})
	s.stop = context.AfterFunc(s.ctx, func() {
		s.pubConn.Close()
		s.conConn.Close()
		close(s.connsClosed)
	})
	if s.pub, err = s.pubConn.Channel(); err != nil {
		return err
	}
	s.con, err = s.conConn.Channel()
	return err
}

// close stops the consumers, deletes the queues and closes the connections.
func (s *benchSession) close() error {
	if s.stop != nil && !s.stop() {
		<-s.connsClosed // interrupted: deleteQueues must see them closed
	}
	s.cancel()
	s.consumers.Wait()
	var errs []error
	if len(s.queues) > 0 {
		if err := s.deleteQueues(); err != nil {
			errs = append(errs, fmt.Errorf("deleting the queues: %w", err))
		}
	}
	for _, conn := range []*amqp.Connection{s.conConn, s.pubConn} {
		if conn != nil && !conn.IsClosed() {
			errs = append(errs, conn.Close())
		}
	}
	return errors.Join(errs...)
}

// deleteQueues deletes the session's queues on a new channel, and a new
// connection if an interruption closed the session's.
func (s *benchSession) deleteQueues() error {
	conn := s.pubConn
	if conn.IsClosed() {
		var err error
		if conn, err = benchDial(s.url, s.scenario+" cleanup"); err != nil {
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

// declare declares the queue lapse.bench.<scenario>.<id>, followed by
// ".<role>" when role is not empty.
func (s *benchSession) declare(role string, durable bool, args amqp.Table) (string, error) {
	name := "lapse.bench." + s.scenario + "." + s.id
	if role != "" {
		name += "." + role
	}
	if _, err := s.pub.QueueDeclare(name, durable, false, false, false, args); err != nil {
		return "", fmt.Errorf("declaring %s: %w", name, err)
	}
	s.queues = append(s.queues, name)
	return name, nil
}

// benchPublishTimes are when a publisher sent its first and its last message
// and received its last confirm.
type benchPublishTimes struct{ first, lastSent, lastConfirm time.Time }

// publish sends n copies of msg to queue through the default exchange. With
// a window above 0 it puts the channel in confirm mode, never has more than
// window messages unconfirmed and returns once all are confirmed.
func (s *benchSession) publish(queue string, msg amqp.Publishing, n, window int) (benchPublishTimes, error) {
	var t benchPublishTimes
	var confirms chan amqp.Confirmation
	closed := s.pub.NotifyClose(make(chan *amqp.Error, 1))
	if window > 0 {
		if err := s.pub.Confirm(false); err != nil {
			return t, fmt.Errorf("confirm mode: %w", err)
		}
		// The buffer holds every confirm that can be outstanding, so the
		// connection's reader never waits for this loop.
		confirms = s.pub.NotifyPublish(make(chan amqp.Confirmation, window))
	}
	stall := time.NewTimer(benchStall)
	defer stall.Stop()
	pending := 0
	await := func() error {
		var c amqp.Confirmation
		ok := true
		select {
		case c, ok = <-confirms:
		default:
			stall.Reset(benchStall)
			select {
			case c, ok = <-confirms:
			case <-stall.C:
				return fmt.Errorf("no confirm for %s with %d unconfirmed", benchStall, pending)
			case <-s.ctx.Done():
				return s.ctx.Err()
			}
		}
		switch {
		case !ok:
			return benchCloseReason(closed, errors.New("the channel closed before every confirm came"))
		case !c.Ack:
			return fmt.Errorf("the broker nacked message %d", c.DeliveryTag)
		}
		pending--
		return nil
	}
	t.first = time.Now()
	for range n {
		for window > 0 && pending >= window {
			if err := await(); err != nil {
				return t, err
			}
		}
		if err := s.pub.PublishWithContext(s.ctx, "", queue, false, false, msg); err != nil {
			return t, benchCloseReason(closed, err)
		}
		if window > 0 {
			pending++
		}
	}
	t.lastSent = time.Now()
	for pending > 0 {
		if err := await(); err != nil {
			return t, err
		}
	}
	t.lastConfirm = time.Now()
	return t, nil
}

// benchConsumed is what a consumer saw: when its first and its last delivery
// came, or why it stopped early.
type benchConsumed struct {
	first, last time.Time
	err         error
	kicks       int // AMQP 1.0: how often the credit was given again after a stall
}

// consume starts a consumer of queue on the consuming connection, with
// autoAck or else acking each delivery with a prefetch of benchPrefetch.
// Its result comes on the returned channel once n messages have arrived.
func (s *benchSession) consume(queue string, n int, autoAck bool) (<-chan benchConsumed, error) {
	if !autoAck {
		if err := s.con.Qos(benchPrefetch, 0, false); err != nil {
			return nil, fmt.Errorf("qos: %w", err)
		}
	}
	closed := s.con.NotifyClose(make(chan *amqp.Error, 1))
	deliveries, err := s.con.Consume(queue, "", autoAck, false, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("consuming %s: %w", queue, err)
	}
	out := make(chan benchConsumed, 1)
	s.consumers.Go(func() { out <- s.receive(deliveries, closed, n, autoAck) })
	return out, nil
}

// receive takes n deliveries.
func (s *benchSession) receive(deliveries <-chan amqp.Delivery, closed <-chan *amqp.Error, n int, autoAck bool) (r benchConsumed) {
	// A ticker rather than a timer reset per delivery keeps the loop cheap.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	got, seen, idle := 0, 0, time.Duration(0)
	for got < n {
		select {
		case d, ok := <-deliveries:
			if !ok {
				r.err = benchCloseReason(closed, fmt.Errorf("deliveries stopped after %d of %d", got, n))
				return r
			}
			if got == 0 {
				r.first = time.Now()
			}
			got++
			if !autoAck {
				if err := d.Ack(false); err != nil {
					r.err = benchCloseReason(closed, err)
					return r
				}
			}
		case <-tick.C:
			if got != seen {
				seen, idle = got, 0
				continue
			}
			if idle += time.Second; idle >= benchStall {
				r.err = fmt.Errorf("no delivery for %s after %d of %d", benchStall, got, n)
				return r
			}
		case <-s.ctx.Done():
			r.err = s.ctx.Err()
			return r
		}
	}
	r.last = time.Now()
	return r
}

// benchCloseReason is the broker's reason for closing a channel, if it gave
// one, else err.
func benchCloseReason(closed <-chan *amqp.Error, err error) error {
	select {
	case e, ok := <-closed:
		if ok && e != nil {
			return e
		}
	default:
	}
	return err
}

package difftest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

const (
	// arrivalTimeout bounds the wait for something the broker owes at once: a
	// delivery to a ready consumer, a publisher confirm, a close notification.
	// Only a broken broker or harness runs into it.
	arrivalTimeout = 5 * time.Second
	// quietPeriod is how long a scenario watches for something that must not
	// arrive (a delivery, a basic.cancel). It is real time on every target.
	quietPeriod = 300 * time.Millisecond
	// maxLines stops a runaway scenario before it eats the machine's memory.
	maxLines = 2000
)

// S is one run of a scenario: the broker it talks to, the transcript it
// writes and the names it cleans up. Scenario code uses its methods and those
// of the connections and channels it opens; every method records what the
// client observed as one transcript line or more.
type S struct {
	tb     testing.TB
	target Target
	prefix string
	norm   *normaliser
	lines  []string

	main  *Conn
	conns []*Conn
	raws  []*Raw

	admin   *amqp.Connection
	adminCh *amqp.Channel

	queues, exchanges          []string
	policies, operatorPolicies []string
}

func newS(tb testing.TB, target Target, sc Scenario) *S {
	if target.Wait == nil {
		tb.Fatalf("target %s has no Wait", target.Name)
	}
	return &S{tb: tb, target: target, prefix: "d." + sc.Name + ".", norm: newNormaliser(), lines: []string{}}
}

// Note records one transcript line, normalised.
func (s *S) Note(format string, args ...any) {
	s.tb.Helper()
	if len(s.lines) >= maxLines {
		s.tb.Fatalf("transcript longer than %d lines: a scenario or harness loop", maxLines)
	}
	// A reply text may hold line breaks (RabbitMQ pretty-prints long Erlang
	// terms); a transcript line may not.
	line := strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(fmt.Sprintf(format, args...))
	s.lines = append(s.lines, s.norm.line(line))
}

// Wait lets d of broker time pass (Target.Wait) and records it.
func (s *S) Wait(d time.Duration) {
	s.tb.Helper()
	s.Note("wait %v", d)
	s.target.Wait(s.tb, d)
}

// Name returns the scenario's name for short, unique to the scenario
// ("d.<scenario>.<short>"), without creating or deleting anything.
func (s *S) Name(short string) string { return s.prefix + short }

// Queue returns the scenario's queue name for short, deletes any queue of that
// name left by an earlier run, and deletes it again at the end.
func (s *S) Queue(short string) string {
	s.tb.Helper()
	name := s.Name(short)
	s.queues = append(s.queues, name)
	s.mustAdmin(func(ch *amqp.Channel) error {
		_, err := ch.QueueDelete(name, false, false, false)
		return err
	})
	return name
}

// Exchange is Queue for an exchange.
func (s *S) Exchange(short string) string {
	s.tb.Helper()
	name := s.Name(short)
	s.exchanges = append(s.exchanges, name)
	s.mustAdmin(func(ch *amqp.Channel) error { return ch.ExchangeDelete(name, false, false) })
	return name
}

// Conn opens a new connection, named by its connection_name client
// property "d.<scenario>.<n>". It records nothing.
func (s *S) Conn() *Conn {
	s.tb.Helper()
	return s.ConnNamed(s.prefix + fmt.Sprint(len(s.conns)+1))
}

// ConnNamed opens a new connection that gives name as its connection_name
// client property, as an application that recovers its connection gives
// the same name again. It records nothing.
func (s *S) ConnNamed(name string) *Conn {
	s.tb.Helper()
	cfg := amqp.Config{Properties: amqp.NewConnectionProperties(), Heartbeat: 10 * time.Second}
	cfg.Properties.SetClientConnectionName(name)
	c, err := amqp.DialConfig(s.target.URL, cfg)
	if err != nil {
		s.tb.Fatalf("connect to %s: %v", s.target.Name, err)
	}
	conn := &Conn{s: s, conn: c, name: name, closes: c.NotifyClose(make(chan *amqp.Error, 1))}
	s.conns = append(s.conns, conn)
	return conn
}

// Ch opens a new channel on the scenario's main connection. It records nothing.
func (s *S) Ch() *Ch {
	s.tb.Helper()
	if s.main == nil || s.main.conn.IsClosed() {
		s.main = s.Conn()
	}
	return s.main.Ch()
}

// Count records a passive queue.declare on a channel of its own: the message
// and consumer counts, or the error (a missing queue closes that channel).
func (s *S) Count(queue string) {
	s.tb.Helper()
	ch := s.Ch()
	ch.Passive(queue)
	ch.closeQuietly()
}

// adminDo runs f on a connection of the harness's own, outside the
// transcript, reopening what an earlier error closed. Errors of f are
// ignored (deleting a name that does not exist is fine); it returns only the
// error of reaching the broker.
func (s *S) adminDo(f func(ch *amqp.Channel) error) error {
	if s.admin == nil || s.admin.IsClosed() {
		c, err := amqp.Dial(s.target.URL)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", s.target.Name, err)
		}
		s.admin, s.adminCh = c, nil
	}
	if s.adminCh == nil || s.adminCh.IsClosed() {
		ch, err := s.admin.Channel()
		if err != nil {
			return fmt.Errorf("admin channel on %s: %w", s.target.Name, err)
		}
		s.adminCh = ch
	}
	_ = f(s.adminCh)
	return nil
}

// mustAdmin is adminDo that fails the scenario when the broker is out of reach.
func (s *S) mustAdmin(f func(ch *amqp.Channel) error) {
	s.tb.Helper()
	if err := s.adminDo(f); err != nil {
		s.tb.Fatal(err)
	}
}

// cleanup closes the scenario's connections and deletes what it named. It
// runs after failures too, so it only logs what goes wrong.
func (s *S) cleanup() {
	for _, c := range s.conns {
		if !c.conn.IsClosed() {
			_ = c.conn.CloseDeadline(time.Now().Add(arrivalTimeout))
		}
	}
	for _, r := range s.raws {
		r.nc.Close()
	}
	var errs []error
	for _, q := range s.queues {
		errs = append(errs, s.adminDo(func(ch *amqp.Channel) error {
			_, err := ch.QueueDelete(q, false, false, false)
			return err
		}))
	}
	for _, x := range s.exchanges {
		errs = append(errs, s.adminDo(func(ch *amqp.Channel) error { return ch.ExchangeDelete(x, false, false) }))
	}
	for _, p := range s.policies {
		errs = append(errs, s.deletePolicy("policies", p))
	}
	for _, p := range s.operatorPolicies {
		errs = append(errs, s.deletePolicy("operator-policies", p))
	}
	if err := errors.Join(errs...); err != nil {
		s.tb.Logf("cleanup: %v", err)
	}
	if s.admin != nil {
		_ = s.admin.CloseDeadline(time.Now().Add(arrivalTimeout))
	}
}

// Conn is a connection a scenario opened.
type Conn struct {
	s      *S
	conn   *amqp.Connection
	name   string           // its connection_name client property
	closes chan *amqp.Error // the close amqp091-go reports, for the broker's closes
}

// Ch opens a channel on c. It records nothing.
func (c *Conn) Ch() *Ch {
	c.s.tb.Helper()
	raw, err := c.conn.Channel()
	if err != nil {
		c.s.tb.Fatalf("open a channel: %v", err)
	}
	ch := &Ch{
		s: c.s, c: c, ch: raw,
		closes:  raw.NotifyClose(make(chan *amqp.Error, 1)),
		returns: raw.NotifyReturn(make(chan amqp.Return, 100)),
		cancels: raw.NotifyCancel(make(chan string, 100)),
	}
	return ch
}

// Close closes the connection and records it.
func (c *Conn) Close() {
	c.s.tb.Helper()
	if err := c.conn.CloseDeadline(time.Now().Add(arrivalTimeout)); err != nil {
		c.s.tb.Fatalf("close a connection: %v", err)
	}
	c.s.Note("connection.close: ok")
}

// Ch is a channel a scenario opened.
type Ch struct {
	s        *S
	c        *Conn
	ch       *amqp.Channel
	closes   chan *amqp.Error
	returns  chan amqp.Return
	cancels  chan string
	confirms chan amqp.Confirmation // set by Confirm
	dead     bool                   // closed by the broker or by Close
}

// live fails the scenario when it uses a channel already closed: that is a
// mistake in the scenario, not an observation.
func (ch *Ch) live(op string) {
	ch.s.tb.Helper()
	if ch.dead {
		ch.s.tb.Fatalf("scenario bug: %s on a closed channel", op)
	}
}

// result records op's outcome: "op: ok" (or okText) when err is nil, else the
// channel or connection close the broker sent. It reports whether err was nil.
func (ch *Ch) result(op string, err error, okText string) bool {
	ch.s.tb.Helper()
	if err == nil {
		ch.s.Note("%s: %s", op, okText)
		return true
	}
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		ch.s.tb.Fatalf("%s: client error: %v", op, err)
	}
	ch.s.Note("%s: %s", op, ch.closedText(ch.awaitClose(op, ae)))
	return false
}

// awaitClose returns the error the broker closed ch with, as amqp091-go
// reports it to NotifyClose listeners; fallback is used when the listener
// channel was closed without one.
func (ch *Ch) awaitClose(op string, fallback *amqp.Error) *amqp.Error {
	ch.s.tb.Helper()
	select {
	case e, ok := <-ch.closes:
		if ok && e != nil {
			return e
		}
		if fallback == nil {
			ch.s.tb.Fatalf("%s: channel closed without an error", op)
		}
		return fallback
	case <-time.After(arrivalTimeout):
		ch.s.tb.Fatalf("%s: no close notification", op)
		return nil
	}
}

// closedText marks ch dead and writes the close the broker sent:
// "channel closed 406 PRECONDITION_FAILED - ...", or "connection closed ..."
// for a connection-level error (amqp091-go marks the connection closed before
// it tells the channels).
func (ch *Ch) closedText(e *amqp.Error) string {
	ch.dead = true
	kind := "channel"
	if ch.c.conn.IsClosed() {
		kind = "connection"
	}
	return fmt.Sprintf("%s closed %d %s", kind, e.Code, e.Reason)
}

// sync makes a round trip the broker must answer after everything sent before
// it, so an asynchronous method's channel error (a bad publish, an unknown
// delivery tag) shows up now. exchange.declare passive of amq.direct changes
// nothing and exists everywhere.
func (ch *Ch) sync() error {
	return ch.ch.ExchangeDeclarePassive("amq.direct", "direct", true, false, false, false, nil)
}

// async sends an asynchronous method and records its outcome after a sync.
func (ch *Ch) async(op string, send func() error) bool {
	ch.s.tb.Helper()
	ch.live(op)
	err := send()
	if err == nil {
		err = ch.sync()
	}
	ok := ch.result(op, err, "ok")
	ch.drainReturns()
	return ok
}

// drainReturns records the basic.returns that arrived.
func (ch *Ch) drainReturns() {
	for {
		select {
		case r, ok := <-ch.returns:
			if !ok { // closed with the channel
				return
			}
			ch.s.Note("%s", formatReturn(r))
		default:
			return
		}
	}
}

// Close closes the channel and records it.
func (ch *Ch) Close() {
	ch.s.tb.Helper()
	ch.live("channel.close")
	ch.dead = true
	ch.result("channel.close", ch.ch.Close(), "ok")
}

func (ch *Ch) closeQuietly() {
	if !ch.dead {
		ch.dead = true
		_ = ch.ch.Close()
	}
}

// ExpectCancel records the basic.cancel the broker sent for a consumer of ch,
// or that none came within arrivalTimeout.
func (ch *Ch) ExpectCancel() {
	ch.s.tb.Helper()
	select {
	case tag, ok := <-ch.cancels:
		if !ok {
			ch.s.tb.Fatalf("basic.cancel from broker: channel closed")
		}
		ch.s.Note("basic.cancel from broker: consumer %q", tag)
	case <-time.After(arrivalTimeout):
		ch.s.Note("basic.cancel from broker: none")
	}
}

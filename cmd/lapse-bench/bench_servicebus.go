package main

// The Service Bus scenarios of lapse-bench, against lapse only: the
// azservicebus SDK end to end, and the dead-lettering of a bulk expiry on
// lapse's clock. Also the clients of lapse's administration and control
// APIs that the AMQP 1.0 scenarios use on a Service Bus.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/lapse-emulator/lapse/dashboard"
	"github.com/lapse-emulator/lapse/internal/control"
	"github.com/lapse-emulator/lapse/servicebus"
)

const (
	// benchSBReceive is how many messages sb-sdk asks ReceiveMessages for.
	benchSBReceive = 100
	// benchSBTTL is the time to live of the messages of sb-ttl-deadletter:
	// long enough that none expires on the running clock while they are sent.
	benchSBTTL = 10 * time.Minute
)

// benchSBSDK is sb-sdk: c.Messages messages sent with the azservicebus SDK
// in batches as large as they get (NewMessageBatch, SendMessageBatch) to a
// new queue while a receiver of the SDK takes them in peek-lock,
// ReceiveMessages of benchSBReceive, and completes each from one of
// benchSettlers goroutines. The rate runs from the first send to the last
// completion.
func benchSBSDK(ctx context.Context, c benchConfig) (benchResult, error) {
	return withAMQP1Session(ctx, c, "sb-sdk", func(s *amqp1Session) (benchResult, error) {
		q, err := s.makeQueue("", false)
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
		receiver, err := client.NewReceiverForQueue(q, &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModePeekLock})
		if err != nil {
			return benchResult{}, err
		}
		done := make(chan benchConsumed, 1)
		s.wg.Go(func() { done <- benchSDKReceive(s.ctx, receiver, c.Messages) })
		first := time.Now()
		batches, err := benchSDKSend(s.ctx, sender, c, c.Messages)
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
		notes := fmt.Sprintf("batches of %d on average, ReceiveMessages(%d), CompleteMessage each from %d goroutines; sending took %s",
			c.Messages/batches, benchSBReceive, benchSettlers, benchMillis(sent.Sub(first)))
		return benchRate(c.Messages, got.last.Sub(first), notes), nil
	})
}

// benchSDKSend sends n messages of c.Size bytes in batches as large as the
// sender allows, and returns how many batches it sent.
func benchSDKSend(ctx context.Context, sender *azservicebus.Sender, c benchConfig, n int) (int, error) {
	body := benchAMQP1Message(c, 0).Data[0]
	batches := 0
	for n > 0 {
		b, err := sender.NewMessageBatch(ctx, nil)
		if err != nil {
			return batches, fmt.Errorf("NewMessageBatch: %w", err)
		}
		for n > 0 {
			err := b.AddMessage(&azservicebus.Message{Body: body}, nil)
			if errors.Is(err, azservicebus.ErrMessageTooLarge) && b.NumMessages() > 0 {
				break
			}
			if err != nil {
				return batches, fmt.Errorf("AddMessage: %w", err)
			}
			n--
		}
		if err := sender.SendMessageBatch(ctx, b, nil); err != nil {
			return batches, fmt.Errorf("SendMessageBatch: %w", err)
		}
		batches++
	}
	return batches, nil
}

// benchSDKReceive receives n messages benchSBReceive at a time and
// completes each from one of benchSettlers goroutines. first is when the
// first ReceiveMessages was called, last when the last completion returned.
func benchSDKReceive(ctx context.Context, receiver *azservicebus.Receiver, n int) (r benchConsumed) {
	w := newBenchWatch(ctx, "message")
	defer w.stop()
	defer receiver.Close(context.WithoutCancel(ctx))
	msgs := make(chan *azservicebus.ReceivedMessage, benchSBReceive)
	var settlers sync.WaitGroup
	for range benchSettlers {
		settlers.Go(func() {
			for m := range msgs {
				if err := receiver.CompleteMessage(w.ctx, m, nil); err != nil {
					w.fail(fmt.Errorf("CompleteMessage: %w", err))
					continue
				}
				w.step()
			}
		})
	}
	r.first = time.Now()
	for got := 0; got < n && w.ctx.Err() == nil; {
		batch, err := receiver.ReceiveMessages(w.ctx, min(benchSBReceive, n-got), nil)
		if err != nil {
			w.fail(fmt.Errorf("ReceiveMessages: %w", err))
			break
		}
		for _, m := range batch {
			msgs <- m
		}
		got += len(batch)
	}
	close(msgs)
	settlers.Wait()
	r.last = time.Now()
	if err := w.err(); err != nil {
		r.err = fmt.Errorf("receiving: %w", err)
	}
	return r
}

// benchSBDeadLetter is sb-ttl-deadletter: c.Messages messages with a time
// to live of benchSBTTL sent to a new queue that dead-letters expired
// messages; then lapse's clock is moved past their expiry (POST
// /api/clock/advance) while the control API is polled, every millisecond,
// until all are in the queue's $DeadLetterQueue. The figure is the time
// from the advance to that poll; the notes say when the advance answered,
// which it does once the moves are stored.
func benchSBDeadLetter(ctx context.Context, c benchConfig) (benchResult, error) {
	return withAMQP1Session(ctx, c, "sb-ttl-deadletter", func(s *amqp1Session) (benchResult, error) {
		q, err := s.makeQueue("", true)
		if err != nil {
			return benchResult{}, err
		}
		pt, err := s.send(q, benchAMQP1Message(c, benchSBTTL), c.Messages)
		if err != nil {
			return benchResult{}, err
		}
		ctl := newBenchControl(c.ControlURL)
		defer ctl.close()
		// Past the expiry of the first message sent, and so of all.
		by := (benchSBTTL + time.Since(pt.first) + time.Second).Round(time.Millisecond)
		// The advance answers once the moves are stored; the poll, from a
		// second connection, sees them as soon as the engine has made them.
		type answer struct {
			st  dashboard.ClockState
			at  time.Time
			err error
		}
		answered := make(chan answer, 1)
		start := time.Now()
		s.wg.Go(func() {
			var a answer
			a.err = ctl.Do(s.ctx, http.MethodPost, "/api/clock/advance", map[string]string{"by": by.String()}, &a.st)
			a.at = time.Now()
			answered <- a
		})
		poll := newBenchControl(c.ControlURL)
		defer poll.close()
		dlq := q + "/$DeadLetterQueue"
		var last time.Time
		for {
			n, err := poll.active(s.ctx, dlq)
			if err != nil {
				return benchResult{}, err
			}
			if n >= c.Messages {
				last = time.Now()
				break
			}
			if time.Since(start) > benchStall {
				return benchResult{}, fmt.Errorf("%d of %d messages dead-lettered %s after the clock moved", n, c.Messages, benchStall)
			}
			time.Sleep(time.Millisecond)
		}
		a := <-answered
		if a.err != nil {
			return benchResult{}, fmt.Errorf("advancing the clock: %w", a.err)
		}
		lag := float64(last.Sub(start)) / float64(time.Millisecond)
		applied := "?"
		if a.st.Applied != nil {
			applied = fmt.Sprint(*a.st.Applied)
		}
		return benchResult{
			Messages: c.Messages,
			Seconds:  last.Sub(pt.first).Seconds(),
			Value:    &lag,
			Unit:     "ms",
			Notes: fmt.Sprintf("from POST /api/clock/advance (by %s) until the control API shows all in %s; the advance answered, "+
				"its moves stored, after %s (%s events); sending took %s",
				by, "$DeadLetterQueue", benchMillis(a.at.Sub(start)), applied, benchMillis(pt.lastConfirm.Sub(pt.first))),
		}, nil
	})
}

// benchConnectionString is the emulator's connection string for the host
// and port of an AMQP URL.
func benchConnectionString(amqpURL string) (string, error) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return "", err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5672")
	}
	k := servicebus.DefaultKey
	return fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;", host, k.Name, k.Value), nil
}

// benchAdmin is the SDK's administration client of a Service Bus.
type benchAdmin struct {
	c  *admin.Client
	tr *http.Transport
}

// newBenchAdmin returns a client of the administration API at base, signed
// with the emulator's key.
func newBenchAdmin(base string) (*benchAdmin, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, &usageError{fmt.Sprintf("--servicebus-admin-url %q: use http://HOST:PORT", base)}
	}
	k := servicebus.DefaultKey
	cs := fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;", u.Host, k.Name, k.Value)
	tr := &http.Transport{}
	c, err := admin.NewClientFromConnectionString(cs, &admin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: benchScheme{scheme: u.Scheme, base: tr},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		return nil, err
	}
	return &benchAdmin{c: c, tr: tr}, nil
}

// createQueue creates a queue with the service's defaults, dead-lettering
// expired messages when deadLetterOnExpiry.
func (a *benchAdmin) createQueue(ctx context.Context, name string, deadLetterOnExpiry bool) error {
	_, err := a.c.CreateQueue(ctx, name, &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		DeadLetteringOnMessageExpiration: &deadLetterOnExpiry,
	}})
	return err
}

// deleteQueue deletes a queue.
func (a *benchAdmin) deleteQueue(ctx context.Context, name string) error {
	_, err := a.c.DeleteQueue(ctx, name, nil)
	return err
}

func (a *benchAdmin) close() { a.tr.CloseIdleConnections() }

// benchScheme sends the administration client's requests with the scheme
// of --servicebus-admin-url: the SDK (v1.11.0) builds https URLs even for
// the emulator, which serves plain HTTP.
type benchScheme struct {
	scheme string
	base   http.RoundTripper
}

// Do sends req with the scheme replaced.
func (t benchScheme) Do(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *r.URL
	u.Scheme = t.scheme
	r.URL = &u
	return t.base.RoundTrip(r)
}

// benchControl is a client of lapse's control API that keeps its
// connections, for polling.
type benchControl struct {
	*control.Client
	tr *http.Transport
}

// newBenchControl returns a client of the control API at base.
func newBenchControl(base string) *benchControl {
	tr := &http.Transport{}
	return &benchControl{
		Client: &control.Client{Base: strings.TrimSuffix(base, "/"), HTTP: &http.Client{Timeout: time.Minute, Transport: tr}},
		tr:     tr,
	}
}

// active is how many active messages the Service Bus entity name holds.
func (c *benchControl) active(ctx context.Context, name string) (int, error) {
	var ents []dashboard.EntityView
	if err := c.Do(ctx, http.MethodGet, "/api/entities?protocol=servicebus", nil, &ents); err != nil {
		return 0, err
	}
	for _, e := range ents {
		if strings.EqualFold(e.Name, name) {
			return e.Counts.Active, nil
		}
	}
	return 0, fmt.Errorf("lapse has no Service Bus entity %q", name)
}

func (c *benchControl) close() { c.tr.CloseIdleConnections() }

// benchSBRealTimeTTL is the time to live of sb-ttl-deadletter-realtime's
// messages: longer than sending them takes, so that they expire after
// the last is sent, within about as long as the sending took.
const benchSBRealTimeTTL = 5 * time.Second

// benchSBDeadLetterRealTime is sb-ttl-deadletter-realtime: c.Messages
// messages with a time to live of benchSBRealTimeTTL sent to a new queue
// that dead-letters expired messages, on lapse's running clock. Their
// expiries fall within the time the sending took; the expiry runner
// applies them as they fall due. The figure is how long after the last
// message's expiry the control API shows all of them in the
// $DeadLetterQueue; the notes give the largest lateness of a dead letter
// behind its due time among the last events of the queue (the event log
// keeps the newest ones).
func benchSBDeadLetterRealTime(ctx context.Context, c benchConfig) (benchResult, error) {
	return withAMQP1Session(ctx, c, "sb-ttl-deadletter-realtime", func(s *amqp1Session) (benchResult, error) {
		q, err := s.makeQueue("", true)
		if err != nil {
			return benchResult{}, err
		}
		pt, err := s.send(q, benchAMQP1Message(c, benchSBRealTimeTTL), c.Messages)
		if err != nil {
			return benchResult{}, err
		}
		if sent := pt.lastConfirm.Sub(pt.first); sent >= benchSBRealTimeTTL {
			return benchResult{}, fmt.Errorf("sending took %s, longer than the messages' TTL of %s", sent, benchSBRealTimeTTL)
		}
		poll := newBenchControl(c.ControlURL)
		defer poll.close()
		var st dashboard.ClockState
		before := time.Now()
		if err := poll.Do(s.ctx, http.MethodGet, "/api/clock", nil, &st); err != nil {
			return benchResult{}, err
		}
		lapseNow, err := time.Parse(time.RFC3339Nano, st.Now)
		if err != nil {
			return benchResult{}, err
		}
		if st.Mode == "frozen" {
			return benchResult{}, errors.New("lapse's clock is frozen: this scenario needs it running (POST /api/clock/resume)")
		}
		// lapse's clock = wall clock + offset, read to within the request.
		offset := lapseNow.Sub(before.Add(time.Since(before) / 2))
		dlq := q + "/$DeadLetterQueue"
		var all time.Time
		for {
			n, err := poll.active(s.ctx, dlq)
			if err != nil {
				return benchResult{}, err
			}
			if n >= c.Messages {
				all = time.Now()
				break
			}
			if time.Since(pt.lastConfirm) > benchSBRealTimeTTL+benchStall {
				return benchResult{}, fmt.Errorf("%d of %d messages dead-lettered %s after the last one's expiry", n, c.Messages, benchStall)
			}
			time.Sleep(time.Millisecond)
		}
		var events []struct {
			Time, Due time.Time
			Action    string
		}
		path := "/api/events?protocol=servicebus&entity=" + url.QueryEscape(q) + "&limit=100000"
		if err := poll.Do(s.ctx, http.MethodGet, path, nil, &events); err != nil {
			return benchResult{}, err
		}
		var lastDue time.Time
		var worst time.Duration
		for _, e := range events {
			if e.Action != "dead-lettered" {
				continue
			}
			if e.Due.After(lastDue) {
				lastDue = e.Due
			}
			worst = max(worst, e.Time.Sub(e.Due))
		}
		if lastDue.IsZero() {
			return benchResult{}, errors.New("the event log shows no dead-lettering")
		}
		lag := float64(all.Sub(lastDue.Add(-offset))) / float64(time.Millisecond)
		return benchResult{
			Messages: c.Messages,
			Seconds:  all.Sub(pt.first).Seconds(),
			Value:    &lag,
			Unit:     "ms",
			Notes: fmt.Sprintf("from the last message's expiry until the control API shows all in $DeadLetterQueue (polled every ms); "+
				"largest lateness of a dead letter behind its due time among the last %d events: %s; sending took %s",
				len(events), benchMillis(worst), benchMillis(pt.lastConfirm.Sub(pt.first))),
		}, nil
	})
}

package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	amqp "github.com/rabbitmq/amqp091-go"
)

// clientTable is a table holding every type amqp091-go writes.
func clientTable() amqp.Table {
	return amqp.Table{
		"bool":    true,
		"byte":    byte(200),
		"int8":    int8(-8),
		"int16":   int16(-16),
		"int":     int(-32),
		"int32":   int32(math.MinInt32),
		"int64":   int64(math.MinInt64),
		"uint16":  uint16(math.MaxUint16),
		"uint32":  uint32(math.MaxUint32),
		"float32": float32(1.5),
		"float64": 2.25,
		"decimal": amqp.Decimal{Scale: 3, Value: -12345},
		"string":  "text",
		"bytes":   []byte{0, 1, 2, 0xFF},
		"time":    time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
		"void":    nil,
		"array":   []any{int32(1), "two", amqp.Table{"three": int64(3)}, []any{false}, nil},
		"table":   amqp.Table{"nested": amqp.Table{"deep": "yes"}, "n": int16(1)},
	}
}

// clientTableDecoded is clientTable as this codec decodes it: amqp091-go
// writes int as 'I'.
func clientTableDecoded() map[string]any {
	return map[string]any{
		"bool":    true,
		"byte":    uint8(200),
		"int8":    int8(-8),
		"int16":   int16(-16),
		"int":     int32(-32),
		"int32":   int32(math.MinInt32),
		"int64":   int64(math.MinInt64),
		"uint16":  uint16(math.MaxUint16),
		"uint32":  uint32(math.MaxUint32),
		"float32": float32(1.5),
		"float64": 2.25,
		"decimal": Decimal{Scale: 3, Value: -12345},
		"string":  "text",
		"bytes":   []byte{0, 1, 2, 0xFF},
		"time":    time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
		"void":    nil,
		"array":   []any{int32(1), "two", map[string]any{"three": int64(3)}, []any{false}, nil},
		"table":   map[string]any{"nested": map[string]any{"deep": "yes"}, "n": int16(1)},
	}
}

// fromClient turns what amqp091-go decoded into this codec's types.
func fromClient(v any) any {
	switch v := v.(type) {
	case amqp.Table:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = fromClient(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = fromClient(e)
		}
		return a
	case amqp.Decimal:
		return Decimal{Scale: v.Scale, Value: v.Value}
	case time.Time:
		return v.UTC()
	}
	return v
}

// clientPublishing is the message the client publishes, every property set.
func clientPublishing() amqp.Publishing {
	return amqp.Publishing{
		Headers:         clientTable(),
		ContentType:     "application/json",
		ContentEncoding: "utf-8",
		DeliveryMode:    amqp.Persistent,
		Priority:        9,
		CorrelationId:   "corr-7",
		ReplyTo:         "amq.rabbitmq.reply-to",
		Expiration:      "60000",
		MessageId:       "msg-7",
		Timestamp:       time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC),
		Type:            "order.created",
		UserId:          "guest",
		AppId:           "lapse-test",
		Body:            bytes.Repeat([]byte("client-body."), 800), // three frames at 4096
	}
}

// session is what one amqp091-go session through the scripted server gave.
type session struct {
	frames    []clientFrame
	published []publishedMessage
	delivery  amqp.Delivery
	ret       amqp.Return
	confirms  []amqp.Confirmation
	blocked   []amqp.Blocking
	got       amqp.Delivery
	gotOK     bool
	emptyOK   bool
	purged    int
	deleted   int
	queue     amqp.Queue
}

// runSession drives amqp091-go through a session with the scripted server.
func runSession(t *testing.T) session {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := &scriptedServer{confirms: map[uint16]uint64{}}
	served := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		srv.conn, srv.r = conn, NewReader(conn)
		served <- srv.serve()
	}()

	var s session
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := amqp.DialConfig("amqp://guest:guest@"+ln.Addr().String()+"/", amqp.Config{
		Vhost:      "/",
		Locale:     "en_US",
		Properties: amqp.Table{"connection_name": "lapse-wire-test"},
	})
	must(err)
	blocked := conn.NotifyBlocked(make(chan amqp.Blocking, 2))
	ch, err := conn.Channel()
	must(err)
	must(ch.ExchangeDeclare("ex", "topic", true, false, false, false, amqp.Table{"alternate-exchange": "ae"}))
	s.queue, err = ch.QueueDeclare("q", true, false, false, false, clientTable())
	must(err)
	s.blocked = []amqp.Blocking{<-blocked, <-blocked}
	must(ch.QueueBind("q", "rk.#", "ex", false, amqp.Table{"x-match": "all"}))
	must(ch.ExchangeBind("dst", "rk", "ex", false, amqp.Table{"x-arg": int64(1)}))
	must(ch.Qos(10, 0, false))
	must(ch.Confirm(false))
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 2))
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(ch.PublishWithContext(ctx, "ex", "rk.a", true, false, clientPublishing()))
	s.ret = <-returns
	must(ch.PublishWithContext(ctx, "", "q", false, false, amqp.Publishing{Body: []byte("x")}))
	s.confirms = []amqp.Confirmation{<-confirms, <-confirms}
	deliveries, err := ch.Consume("q", "lapse-consumer", false, true, false, false, amqp.Table{"x-priority": int32(5)})
	must(err)
	s.delivery = <-deliveries
	must(s.delivery.Ack(false))
	must(ch.Nack(5, true, false))
	must(ch.Reject(6, true))
	must(ch.Recover(true))
	s.got, s.gotOK, err = ch.Get("q", false)
	must(err)
	_, s.emptyOK, err = ch.Get("q", true)
	must(err)
	must(ch.Cancel("lapse-consumer", false))
	must(ch.QueueUnbind("q", "rk.#", "ex", amqp.Table{"x-match": "all"}))
	s.purged, err = ch.QueuePurge("q", false)
	must(err)
	s.deleted, err = ch.QueueDelete("q", true, true, false)
	must(err)
	must(ch.ExchangeUnbind("dst", "rk", "ex", false, nil))
	must(ch.ExchangeDelete("ex", true, false))
	ch2, err := conn.Channel()
	must(err)
	must(ch2.Tx())
	must(ch2.TxCommit())
	must(ch2.TxRollback())
	must(ch2.Flow(false))
	must(ch2.Close())
	must(ch.Close())
	must(conn.Close())
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("scripted server: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("scripted server did not finish")
	}
	s.frames, s.published = srv.frames, srv.published
	return s
}

// TestRecordClientSession runs amqp091-go against a scripted server built
// on this codec, checks that each side decodes what the other encoded, and
// with -update records the client's frames as fuzz seeds.
func TestRecordClientSession(t *testing.T) {
	s := runSession(t)
	t.Run("ServerDecodesClient", func(t *testing.T) { checkServerSide(t, s) })
	t.Run("ClientDecodesServer", func(t *testing.T) { checkClientSide(t, s) })
	t.Run("Seeds", func(t *testing.T) { recordSeeds(t, s) })
}

// checkServerSide compares what the codec decoded with what the client sent.
func checkServerSide(t *testing.T, s session) {
	var methods []Method
	for _, f := range s.frames {
		if f.method != nil {
			methods = append(methods, f.method)
		}
	}
	startOk := methods[0].(*ConnectionStartOk)
	// Given properties of its own, amqp091-go adds only its capabilities.
	wantProps := map[string]any{
		"connection_name": "lapse-wire-test",
		"capabilities":    map[string]any{"connection.blocked": true, "consumer_cancel_notify": true, "basic.nack": true, "publisher_confirms": true},
	}
	if diff := cmp.Diff(wantProps, startOk.ClientProperties); diff != "" {
		t.Errorf("client-properties (-want +got):\n%s", diff)
	}
	startOk.ClientProperties = nil
	args := clientTableDecoded()
	want := []Method{
		&ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00guest\x00guest", Locale: "en_US"},
		&ConnectionTuneOk{ChannelMax: 2047, FrameMax: 4096, Heartbeat: 10},
		&ConnectionOpen{VirtualHost: "/"},
		&ChannelOpen{},
		&ExchangeDeclare{Exchange: "ex", Type: "topic", Durable: true, Arguments: map[string]any{"alternate-exchange": "ae"}},
		&QueueDeclare{Queue: "q", Durable: true, Arguments: args},
		&QueueBind{Queue: "q", Exchange: "ex", RoutingKey: "rk.#", Arguments: map[string]any{"x-match": "all"}},
		&ExchangeBind{Destination: "dst", Source: "ex", RoutingKey: "rk", Arguments: map[string]any{"x-arg": int64(1)}},
		&BasicQos{PrefetchCount: 10},
		&ConfirmSelect{},
		&BasicPublish{Exchange: "ex", RoutingKey: "rk.a", Mandatory: true},
		&BasicPublish{RoutingKey: "q"},
		&BasicConsume{Queue: "q", ConsumerTag: "lapse-consumer", Exclusive: true, Arguments: map[string]any{"x-priority": int32(5)}},
		&BasicAck{DeliveryTag: 1},
		&BasicNack{DeliveryTag: 5, Multiple: true},
		&BasicReject{DeliveryTag: 6, Requeue: true},
		&BasicRecover{Requeue: true},
		&BasicGet{Queue: "q"},
		&BasicGet{Queue: "q", NoAck: true},
		&BasicCancel{ConsumerTag: "lapse-consumer"},
		&QueueUnbind{Queue: "q", Exchange: "ex", RoutingKey: "rk.#", Arguments: map[string]any{"x-match": "all"}},
		&QueuePurge{Queue: "q"},
		&QueueDelete{Queue: "q", IfUnused: true, IfEmpty: true},
		&ExchangeUnbind{Destination: "dst", Source: "ex", RoutingKey: "rk"},
		&ExchangeDelete{Exchange: "ex", IfUnused: true},
		&ChannelOpen{},
		&TxSelect{},
		&TxCommit{},
		&TxRollback{},
		&ChannelFlow{Active: false},
		&ChannelClose{ReplyCode: ReplySuccess},
		&ChannelClose{ReplyCode: ReplySuccess},
		&ConnectionClose{ReplyCode: ReplySuccess, ReplyText: "kthxbai"},
	}
	if diff := cmp.Diff(want, methods, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("methods the client sent (-want +got):\n%s", diff)
	}

	pub := clientPublishing()
	wantPub := []publishedMessage{
		{
			Method: &BasicPublish{Exchange: "ex", RoutingKey: "rk.a", Mandatory: true},
			Props: Properties{
				Flags: FlagContentType | FlagContentEncoding | FlagHeaders | FlagDeliveryMode | FlagPriority |
					FlagCorrelationID | FlagReplyTo | FlagExpiration | FlagMessageID | FlagTimestamp |
					FlagType | FlagUserID | FlagAppID,
				ContentType: pub.ContentType, ContentEncoding: pub.ContentEncoding, Headers: args,
				DeliveryMode: 2, Priority: 9, CorrelationID: pub.CorrelationId, ReplyTo: pub.ReplyTo,
				Expiration: pub.Expiration, MessageID: pub.MessageId, Timestamp: pub.Timestamp,
				Type: pub.Type, UserID: pub.UserId, AppID: pub.AppId,
			},
			Body: pub.Body,
		},
		{Method: &BasicPublish{RoutingKey: "q"}, Body: []byte("x")},
	}
	if diff := cmp.Diff(wantPub, s.published, cmpopts.IgnoreFields(publishedMessage{}, "Header")); diff != "" {
		t.Errorf("published messages (-want +got):\n%s", diff)
	}
	for i, p := range s.published {
		if p.Header.ClassID != ClassBasic || p.Header.BodySize != uint64(len(p.Body)) {
			t.Errorf("publish %d: content header %+v", i, p.Header)
		}
	}
	bodies := 0
	for _, f := range s.frames {
		if f.Type == FrameBody {
			bodies++
			if len(f.Payload)+frameOverhead > 4096 {
				t.Errorf("client body frame of %d octets over frame-max", len(f.Payload)+frameOverhead)
			}
		}
	}
	if bodies != 4 {
		t.Errorf("client sent %d body frames, want 3 + 1", bodies)
	}
}

// checkClientSide compares what the client decoded with what the scripted
// server sent.
func checkClientSide(t *testing.T, s session) {
	props := deliveryProps()
	d := s.delivery
	type message struct {
		Headers                                             any
		ContentType, ContentEncoding                        string
		DeliveryMode, Priority                              uint8
		CorrelationID, ReplyTo, Expiration, MessageID       string
		Timestamp                                           time.Time
		Type, UserID, AppID, ConsumerTag, Exchange, RoutKey string
		DeliveryTag                                         uint64
		Redelivered                                         bool
		Body                                                []byte
	}
	want := message{props.Headers, props.ContentType, props.ContentEncoding, props.DeliveryMode, props.Priority,
		props.CorrelationID, props.ReplyTo, props.Expiration, props.MessageID, props.Timestamp,
		props.Type, props.UserID, props.AppID, "lapse-consumer", "ex", "rk.a", 1, true, deliveryBody()}
	got := message{fromClient(d.Headers), d.ContentType, d.ContentEncoding, d.DeliveryMode, d.Priority,
		d.CorrelationId, d.ReplyTo, d.Expiration, d.MessageId, d.Timestamp.UTC(),
		d.Type, d.UserId, d.AppId, d.ConsumerTag, d.Exchange, d.RoutingKey, d.DeliveryTag, d.Redelivered, d.Body}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivery as the client decoded it (-want +got):\n%s", diff)
	}

	pub := clientPublishing()
	r := s.ret
	if r.ReplyCode != NoRoute || r.ReplyText != "NO_ROUTE" || r.Exchange != "ex" || r.RoutingKey != "rk.a" ||
		!bytes.Equal(r.Body, pub.Body) || r.MessageId != pub.MessageId || !r.Timestamp.Equal(pub.Timestamp) {
		t.Errorf("basic.return as the client decoded it: %+v", r)
	}
	if diff := cmp.Diff(clientTableDecoded(), fromClient(r.Headers)); diff != "" {
		t.Errorf("returned headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]amqp.Confirmation{{DeliveryTag: 1, Ack: true}, {DeliveryTag: 2, Ack: true}}, s.confirms); diff != "" {
		t.Errorf("confirms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]amqp.Blocking{{Active: true, Reason: "low on memory"}, {Active: false}}, s.blocked); diff != "" {
		t.Errorf("blocked notifications (-want +got):\n%s", diff)
	}
	if !s.gotOK || s.got.DeliveryTag != 42 || !s.got.Redelivered || s.got.MessageCount != 5 || s.got.Exchange != "ex" ||
		s.got.RoutingKey != "rk" || s.got.ReplyTo != "r" || s.got.Priority != 1 || len(s.got.Body) != 0 {
		t.Errorf("basic.get-ok as the client decoded it: ok %v, %+v", s.gotOK, s.got)
	}
	if s.emptyOK {
		t.Error("basic.get-empty decoded as a message")
	}
	if s.queue.Name != "q" || s.queue.Messages != 3 || s.queue.Consumers != 1 || s.purged != 7 || s.deleted != 8 {
		t.Errorf("counts: %+v, purged %d, deleted %d", s.queue, s.purged, s.deleted)
	}
}

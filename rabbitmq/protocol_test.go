package rabbitmq_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/watchconn"
	"github.com/lapse-emulator/lapse/rabbitmq"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestLogin(t *testing.T) {
	f := MustServer(t)
	base := strings.TrimPrefix(f.url, "amqp://guest:guest@")
	// Wrong credentials are refused: 403 (amqp091-go reports its own
	// ErrCredentials whatever the server's text).
	_, err := amqp.Dial("amqp://guest:wrong@" + base)
	if e, ok := err.(*amqp.Error); !ok || e.Code != 403 {
		t.Fatalf("wrong password: %v", err)
	}
	c := MustRawStart(t, f)
	c.send(0, &wire.ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00guest\x00wrong", Locale: "en_US",
		ClientProperties: map[string]any{"capabilities": map[string]any{"authentication_failure_close": true}}})
	cl := c.expect(&wire.ConnectionClose{}).(*wire.ConnectionClose)
	if cl.ReplyCode != 403 || cl.ReplyText != "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile." {
		t.Fatalf("closed with %d %q", cl.ReplyCode, cl.ReplyText)
	}
	// AMQPLAIN works too.
	conn, err := amqp.DialConfig(f.url, amqp.Config{SASL: []amqp.Authentication{&amqp.AMQPlainAuth{Username: "guest", Password: "guest"}}})
	if err != nil {
		t.Fatalf("AMQPLAIN: %v", err)
	}
	conn.Close()
	// An unknown vhost is a connection error 530.
	_, err = amqp.Dial(f.url + "nosuch")
	if e, ok := err.(*amqp.Error); !ok || e.Code != 530 || e.Reason != "NOT_ALLOWED - vhost nosuch not found" {
		t.Fatalf("unknown vhost: %v", err)
	}
}

func TestChannelErrorLeavesOtherChannels(t *testing.T) {
	f := MustServer(t)
	conn := f.MustDial()
	bad, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	good, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, good, "kept", nil)
	MustPublish(t, good, "", "kept", amqp.Publishing{Body: []byte("m")})
	_, err = bad.QueueDeclarePassive("missing", false, false, false, false, nil)
	if e := closeErr(t, err); e.Code != 404 || e.Reason != "NOT_FOUND - no queue 'missing' in vhost '/'" {
		t.Fatalf("passive declare of a missing queue: %v", e)
	}
	if got := drain(t, good, "kept"); !cmp.Equal(got, []string{"m"}) {
		t.Fatalf("the other channel got %q", got)
	}
	// The closed channel's number can be opened again.
	if _, err := conn.Channel(); err != nil {
		t.Fatal(err)
	}
}

func TestLargeMessagesSplitOverFrameMax(t *testing.T) {
	f := MustServer(t)
	conn, err := amqp.DialConfig(f.url, amqp.Config{FrameSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "big", nil)
	body := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB over 4 KB frames
	MustPublish(t, ch, "", "big", amqp.Publishing{Body: body, Headers: amqp.Table{"n": int64(1)}})
	d, ok, err := ch.Get("big", true)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if !bytes.Equal(d.Body, body) {
		t.Fatalf("body of %d bytes came back as %d bytes", len(body), len(d.Body))
	}
}

// rawConn is a hand-driven AMQP 0-9-1 client on our own codec.
type rawConn struct {
	tb testing.TB
	nc net.Conn
	r  *wire.Reader
}

// MustRawStart connects and reads connection.start.
func MustRawStart(tb testing.TB, f *fixture) *rawConn {
	tb.Helper()
	nc, err := net.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	c := &rawConn{tb: tb, nc: nc, r: wire.NewReader(nc)}
	nc.Write(wire.ProtocolHeader[:])
	c.expect(&wire.ConnectionStart{})
	return c
}

// MustRawOpen connects and runs the handshake with heartbeat hb seconds.
func MustRawOpen(tb testing.TB, f *fixture, hb uint16) *rawConn {
	tb.Helper()
	c := MustRawStart(tb, f)
	c.send(0, &wire.ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00guest\x00guest", Locale: "en_US"})
	c.expect(&wire.ConnectionTune{})
	c.send(0, &wire.ConnectionTuneOk{ChannelMax: 10, FrameMax: 4096, Heartbeat: hb})
	c.send(0, &wire.ConnectionOpen{VirtualHost: "/"})
	c.expect(&wire.ConnectionOpenOk{})
	return c
}

func (c *rawConn) send(ch uint16, m wire.Method) {
	c.tb.Helper()
	if _, err := c.nc.Write(wire.AppendMethodFrame(nil, ch, m)); err != nil {
		c.tb.Fatal(err)
	}
}

// next reads the next non-heartbeat method.
func (c *rawConn) next() wire.Method {
	c.tb.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := c.r.ReadFrame()
		if err != nil {
			c.tb.Fatal(err)
		}
		if f.Type == wire.FrameHeartbeat {
			continue
		}
		m, err := wire.ReadMethod(f.Payload)
		if err != nil {
			c.tb.Fatal(err)
		}
		return m
	}
}

func (c *rawConn) expect(like wire.Method) wire.Method {
	c.tb.Helper()
	m := c.next()
	wc, wm := like.ClassMethod()
	if gc, gm := m.ClassMethod(); gc != wc || gm != wm {
		c.tb.Fatalf("got %s, want %s (%+v)", wire.MethodName(gc, gm), wire.MethodName(wc, wm), m)
	}
	return m
}

func TestBadFrameClosesOnlyThatConnection(t *testing.T) {
	f := MustServer(t)
	other := f.MustChannel()
	MustDeclare(t, other, "q", nil)
	c := MustRawOpen(t, f, 0)
	// A frame whose frame-end octet is wrong: 501 FRAME_ERROR.
	frame := wire.AppendFrame(nil, wire.FrameMethod, 1, []byte{0, 20, 0, 10, 0})
	frame[len(frame)-1] = 0
	c.nc.Write(frame)
	cl := c.expect(&wire.ConnectionClose{}).(*wire.ConnectionClose)
	if cl.ReplyCode != wire.FrameError {
		t.Fatalf("closed with %d %q, want 501", cl.ReplyCode, cl.ReplyText)
	}
	c.send(0, &wire.ConnectionCloseOk{})
	// A frame bigger than the negotiated frame-max: 501 too, without the
	// server reading (or allocating for) its payload.
	c2 := MustRawOpen(t, f, 0)
	c2.nc.Write([]byte{wire.FrameBody, 0, 1, 0x7f, 0xff, 0xff, 0xff})
	if cl := c2.expect(&wire.ConnectionClose{}).(*wire.ConnectionClose); cl.ReplyCode != wire.FrameError {
		t.Fatalf("oversized frame: closed with %d %q", cl.ReplyCode, cl.ReplyText)
	}
	// Other clients are untouched.
	MustPublish(t, other, "", "q", amqp.Publishing{Body: []byte("still here")})
	if got := drain(t, other, "q"); !cmp.Equal(got, []string{"still here"}) {
		t.Fatalf("other connection got %q", got)
	}
}

func TestMethodOnUnopenedChannel(t *testing.T) {
	f := MustServer(t)
	c := MustRawOpen(t, f, 0)
	c.send(3, &wire.QueueDeclare{Queue: "q"})
	cl := c.expect(&wire.ConnectionClose{}).(*wire.ConnectionClose)
	if cl.ReplyCode != wire.ChannelError || cl.ReplyText != "CHANNEL_ERROR - expected 'channel.open'" {
		t.Fatalf("closed with %d %q", cl.ReplyCode, cl.ReplyText)
	}
}

func TestHeartbeats(t *testing.T) {
	f := MustServer(t)
	c := MustRawOpen(t, f, 1)
	// With a 1 s heartbeat the server sends one within about half a second
	// of silence; this waits for network keep-alive, not for an expiry.
	c.nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	fr, err := c.r.ReadFrame()
	if err != nil || fr.Type != wire.FrameHeartbeat {
		t.Fatalf("got %+v %v, want a heartbeat", fr, err)
	}
	// A client that stays silent for two intervals is dropped.
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := c.r.ReadFrame(); err != nil {
			if err != io.EOF && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("connection ended with %v, want EOF", err)
			}
			return
		}
	}
}

func TestUnsupportedProtocolHeader(t *testing.T) {
	f := MustServer(t)
	nc, err := net.Dial("tcp", f.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("AMQP\x00\x01\x00\x00"))
	got, _ := io.ReadAll(nc)
	if string(got) != "AMQP\x00\x00\x09\x01" {
		t.Fatalf("answer %q, want RabbitMQ's protocol header and close", got)
	}
}

// A server closed while it answers a protocol it does not speak closes at
// once. The close used to wait for a frame writer that way out never
// started, longer than the fixture's bound.
func TestCloseWhileRefusingAProtocol(t *testing.T) {
	f := MustServer(t)
	srv, cli := net.Pipe()
	defer cli.Close()
	w := watchconn.New(srv, nil)
	served := make(chan struct{})
	go func() {
		defer close(served)
		f.s.ServeConn(w, [8]byte([]byte("AMQP\x00\x01\x00\x00")))
	}()
	// The pipe holds the answer until it is read, the connection
	// registered meanwhile.
	<-w.Began()
	f.s.CloseConnections("test")
	var got [8]byte
	if _, err := io.ReadFull(cli, got[:]); err != nil || got != wire.ProtocolHeader {
		t.Fatalf("answer %q, %v; want RabbitMQ's protocol header", got, err)
	}
	<-served
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := f.s.Close(ctx); err != nil {
		t.Fatalf("closing the server: %v", err)
	}
}

func TestPermissions(t *testing.T) {
	app := rabbitmq.User{Name: "app", PasswordHash: rabbitmq.HashPassword([4]byte{1, 2, 3, 4}, "pw"),
		Permissions: map[string]rabbitmq.Permission{"/": {Configure: "^app\\.", Write: "^app\\.|^$", Read: "^app\\."}}}
	f := MustServerOn(t, core.NewMemStore(), t0, rabbitmq.DefaultUser(), app)
	url := strings.Replace(f.url, "guest:guest", "app:pw", 1)
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	MustDeclare(t, ch, "app.q", nil)
	MustPublish(t, ch, "", "app.q", amqp.Publishing{Body: []byte("m")})
	if got := drain(t, ch, "app.q"); !cmp.Equal(got, []string{"m"}) {
		t.Fatalf("got %q", got)
	}
	_, err = ch.QueueDeclare("other", false, false, false, false, nil)
	if e := closeErr(t, err); e.Code != 403 || e.Reason != "ACCESS_REFUSED - access to queue 'other' in vhost '/' refused for user 'app'" {
		t.Fatalf("declare outside the pattern: %v", e)
	}
	// guest may not use the vhost "/"'s permissions of app, and app no other vhost.
	if _, err := amqp.Dial(url + "elsewhere"); err == nil {
		t.Fatal("a vhost that does not exist was opened")
	}
}

// An exclusive consumer needs a queue without consumers, and keeps others
// off it: 403 ACCESS_REFUSED either way, as RabbitMQ refuses them.
func TestExclusiveConsumerIsAlone(t *testing.T) {
	f := MustServer(t)
	ch := f.MustChannel()
	MustDeclare(t, ch, "q", nil)
	if _, err := ch.Consume("q", "plain", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	want := "ACCESS_REFUSED - queue 'q' in vhost '/' in exclusive use"
	if _, err := f.MustChannel().Consume("q", "", false, true, false, false, nil); err == nil {
		t.Fatal("an exclusive consumer of a queue with a consumer was taken")
	} else if e := closeErr(t, err); e.Code != 403 || e.Reason != want {
		t.Errorf("exclusive consumer next to another: %v", e)
	}
	if err := ch.Cancel("plain", false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume("q", "only", false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.MustChannel().Consume("q", "", false, false, false, false, nil); err == nil {
		t.Fatal("a consumer next to an exclusive one was taken")
	} else if e := closeErr(t, err); e.Code != 403 || e.Reason != want {
		t.Errorf("consumer next to an exclusive one: %v", e)
	}
}

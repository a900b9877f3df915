package rabbitmq

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// What the server offers in connection.tune, as RabbitMQ 3.10 does.
const (
	serverChannelMax = 2047
	serverFrameMax   = 131072
	serverHeartbeat  = 60
	handshakeTimeout = 10 * time.Second
	closeTimeout     = 3 * time.Second
	// maxMessageSize is RabbitMQ's default max_message_size.
	maxMessageSize = 128 << 20
)

// conn is one AMQP 0-9-1 connection.
type conn struct {
	s   *Server
	nc  net.Conn
	log *slog.Logger
	r   *wire.Reader
	w   *frameWriter

	user         *User
	vhost        string
	frameMax     uint32
	channelMax   uint16
	heartbeat    time.Duration
	cancelNotify bool // the client takes basic.cancel from the server

	framesRead atomic.Uint64
	octetsRead atomic.Uint64
	// open is set once the handshake is done; its store orders the
	// handshake's writes (user, vhost, tuning, client properties) before
	// the reads of whoever loads it true.
	open atomic.Bool

	// What the management API shows of the connection, written once: at
	// accept, and by the handshake before the first frame counts.
	connectedAt time.Time
	clientProps map[string]any // connection.start-ok's client properties
	mechanism   string         // the authentication mechanism it logged in with

	mu        lockorder.Mutex
	channels  map[uint16]*channel
	exclusive []*queue
	closing   bool // the server sent connection.close
	// forced is the explanation of a close asked by another goroutine
	// (forceClose), which the serving goroutine carries out.
	forced string
	// forcing is forced != "", read without the lock before each frame.
	forcing atomic.Bool
	// backstop arms the close's backstop once (armBackstop).
	backstop  sync.Once
	closed    chan struct{}
	closeOnce sync.Once
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, log: s.connLog(nc),
		w: newFrameWriter(nc), channels: map[uint16]*channel{},
		frameMax: serverFrameMax, closed: make(chan struct{}), connectedAt: s.now()}
	c.r = wire.NewPooledReader(countingReader{nc, &c.octetsRead}, &s.readBufs)
	return c
}

// connLog is the log of a new connection of the server, with its number.
func (s *Server) connLog(nc net.Conn) *slog.Logger {
	return s.log().With("conn", s.nextConnID(), "remote", nc.RemoteAddr().String())
}

// countingReader counts the octets read through it.
type countingReader struct {
	rd io.Reader
	n  *atomic.Uint64
}

func (r countingReader) Read(b []byte) (int, error) {
	n, err := r.rd.Read(b)
	r.n.Add(uint64(n))
	return n, err
}

// errClosed ends serving a connection without another frame.
var errClosed = errors.New("connection closed")

// serve runs the connection: the handshake, then frames until it closes.
func (c *conn) serve(header [8]byte) {
	defer c.nc.Close()
	// The writer runs for every connection served, and every way out of
	// serve closes it here: forceClose waits for its end before it closes
	// the socket, so a way out that never started it held Server.Close for
	// twice closeTimeout (a CI failure of TestUnsupportedProtocolHeader).
	go c.w.run()
	defer func() {
		c.teardown()
		c.w.close()
		select {
		case <-c.w.done:
		case <-time.After(closeTimeout):
		}
	}()
	if header != wire.ProtocolHeader {
		// RabbitMQ's answer to a protocol it does not speak: the header of
		// the one it does, then close.
		c.w.write(func(b []byte) []byte { return append(b, wire.ProtocolHeader[:]...) })
		return
	}
	if err := c.handshake(); err != nil {
		c.fail(err)
		return
	}
	c.log.Debug("connection opened", "user", c.user.Name, "vhost", c.vhost)
	if c.heartbeat > 0 {
		c.s.wg.Add(1)
		go c.heartbeats()
	}
	for {
		f, err := c.readFrame()
		if err != nil {
			c.fail(err)
			return
		}
		c.framesRead.Add(1)
		if err := c.safeFrame(f); err != nil {
			c.fail(err)
			return
		}
	}
}

// errForced is what readFrame returns once forceClose has asked for the
// close; fail turns it into 320 CONNECTION_FORCED.
var errForced = errors.New("connection close forced")

// readFrame reads the next frame to handle, or errForced once forceClose
// has asked for the close. The read deadline forceClose sets wakes a
// blocked read, but it does not stop a frame that arrives before the woken
// goroutine runs: Go's poller then reports the socket readable and the
// read succeeds. A client told by the management API that its connection
// is gone would see that frame answered (the CI failure of
// TestManagementOverviewConnectionsAndHealth), so no frame read after the
// request is handled.
func (c *conn) readFrame() (wire.Frame, error) {
	f, err := c.r.ReadFrame()
	if err == nil && c.forcing.Load() {
		return wire.Frame{}, errForced
	}
	return f, err
}

// safeFrame is frame, with a panic (a bug of lapse's) turned into a
// connection error 541 INTERNAL_ERROR for this connection alone, so that
// the server keeps serving the others.
func (c *conn) safeFrame(f wire.Frame) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("internal error handling a frame", "panic", r, "stack", string(debug.Stack()))
			err = connectionError(wire.InternalError, "internal error")
		}
	}()
	return c.frame(f)
}

// fail ends the connection after err: a protocol error is answered with
// connection.close and a wait for close-ok; I/O errors just end it.
func (c *conn) fail(err error) {
	c.mu.Lock()
	forced := c.forced
	c.mu.Unlock()
	if forced != "" {
		// forceClose woke the read: close as a connection error does.
		err = &amqpError{code: wire.ConnectionForced, text: wire.ReplyText(wire.ConnectionForced, forced), conn: true}
	}
	var we *wire.Error
	var ae *amqpError
	switch {
	case errors.Is(err, errClosed):
		return
	case errors.As(err, &we):
		ae = &amqpError{code: we.Code, text: we.Error(), conn: true}
	case errors.As(err, &ae):
	default:
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.log.Debug("connection ended", "err", err)
		}
		return
	}
	c.log.Info("closing connection", "code", ae.code, "text", ae.text)
	// Channels, consumers and exclusive queues go before the client hears
	// of the close, as in RabbitMQ: what it does next sees them gone.
	c.teardown()
	c.closeWith(ae)
}

// closeWith sends connection.close and waits a while for close-ok.
func (c *conn) closeWith(ae *amqpError) {
	c.mu.Lock()
	already := c.closing
	c.closing = true
	c.mu.Unlock()
	if already {
		return
	}
	c.armBackstop()
	c.send(0, &wire.ConnectionClose{ReplyCode: ae.code, ReplyText: ae.text, ClassID: ae.classID, MethodID: ae.methodID})
	c.nc.SetReadDeadline(time.Now().Add(closeTimeout))
	for {
		f, err := c.r.ReadFrame()
		if err != nil {
			return
		}
		if f.Type != wire.FrameMethod || f.Channel != 0 {
			continue
		}
		switch m, _ := wire.ReadMethod(f.Payload); m.(type) {
		case *wire.ConnectionCloseOk:
			return
		case *wire.ConnectionClose:
			c.send(0, &wire.ConnectionCloseOk{})
			return
		}
	}
}

// forceClose closes the connection from the server side with 320
// CONNECTION_FORCED and the explanation given, as RabbitMQ does on
// shutdown, a management close or the deletion of the vhost. The serving
// goroutine does it, as for a connection error (fail): its read is woken,
// and the channels, consumers and exclusive queues go before the client
// hears of the close, so that a client reconnecting at once finds them
// gone (the real broker's order; its differential test saw the old
// consumer still counted). Only the serving goroutine touches the
// channels.
func (c *conn) forceClose(explanation string) {
	c.mu.Lock()
	if !c.closing && c.forced == "" {
		c.forced = explanation
		c.forcing.Store(true)
		c.nc.SetReadDeadline(time.Now())
	}
	c.mu.Unlock()
	c.armBackstop()
}

// armBackstop closes the socket twice closeTimeout after a close began,
// a forced one or one the server sent (closeWith), unless the writer has
// ended first: a client that reads nothing holds the serving goroutine
// in a send for as long as it wants (the writer's back-pressure), and
// only the socket's close ends that send. Every close arms it, whatever
// closed the connection before: a forced close of a connection already
// closing used to arm nothing, and one whose client had stopped reading
// held Server.Close for ever. Server.Close waits for it.
func (c *conn) armBackstop() {
	c.backstop.Do(func() {
		c.mu.Lock()
		s := c.s // moveTo may change it until the connection is open
		c.mu.Unlock()
		closeSocket := func() {
			select {
			case <-c.w.done:
			case <-time.After(2 * closeTimeout):
			}
			c.nc.Close()
		}
		if !s.goForConn(c, closeSocket) {
			c.nc.Close() // serving it has ended already
		}
	})
}

// setReadDeadline sets the socket's read deadline to t, or to now once
// forceClose has asked for the close, which must wake the read whatever
// deadline the handshake sets or clears around it.
func (c *conn) setReadDeadline(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forced != "" {
		t = time.Now()
	}
	c.nc.SetReadDeadline(t)
}

// send writes one method frame.
func (c *conn) send(ch uint16, m wire.Method) bool {
	return c.w.write(func(b []byte) []byte { return wire.AppendMethodFrame(b, ch, m) })
}

// readMethod reads the next frame during the handshake, which must be a
// method on channel 0.
func (c *conn) readMethod() (wire.Method, error) {
	for {
		f, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		if f.Type == wire.FrameHeartbeat {
			continue
		}
		if f.Type != wire.FrameMethod || f.Channel != 0 {
			return nil, connectionError(wire.CommandInvalid, "expected method frame on channel 0 during the handshake")
		}
		return wire.ReadMethod(f.Payload)
	}
}

// serverProperties are those of RabbitMQ 3.10 with its capabilities.
func (c *conn) serverProperties() map[string]any {
	return map[string]any{
		"capabilities": map[string]any{
			"publisher_confirms":           true,
			"exchange_exchange_bindings":   true,
			"basic.nack":                   true,
			"consumer_cancel_notify":       true,
			"connection.blocked":           true,
			"consumer_priorities":          true,
			"authentication_failure_close": true,
			"per_consumer_qos":             true,
		},
		"cluster_name": "rabbit@lapse",
		"copyright":    "lapse is a local emulator; RabbitMQ is a trademark of Broadcom",
		"information":  "lapse " + c.s.cfg.Version + ": speaks AMQP 0-9-1 as RabbitMQ 3.10 does",
		"platform":     "Go",
		"product":      "RabbitMQ",
		"version":      "3.10.8",
	}
}

// handshake runs connection.start .. connection.open-ok (§2.2.4).
func (c *conn) handshake() error {
	c.setReadDeadline(time.Now().Add(handshakeTimeout))
	defer c.setReadDeadline(time.Time{})
	c.send(0, &wire.ConnectionStart{VersionMajor: 0, VersionMinor: 9, ServerProperties: c.serverProperties(),
		Mechanisms: "PLAIN AMQPLAIN", Locales: "en_US"})
	m, err := c.readMethod()
	if err != nil {
		return err
	}
	startOk, ok := m.(*wire.ConnectionStartOk)
	if !ok {
		return connectionError(wire.CommandInvalid, "expected 'connection.start_ok'")
	}
	caps, _ := startOk.ClientProperties["capabilities"].(map[string]any)
	c.cancelNotify = caps["consumer_cancel_notify"] == true
	authFailureClose := caps["authentication_failure_close"] == true
	var user, pass string
	switch startOk.Mechanism {
	case "PLAIN":
		user, pass, ok = parsePlain([]byte(startOk.Response))
	case "AMQPLAIN":
		user, pass, ok = parseAMQPLAIN(startOk.Response)
	default:
		return connectionError(wire.CommandInvalid, "unknown authentication mechanism '%s'", startOk.Mechanism)
	}
	if ok {
		c.user = c.s.authenticate(user, pass)
	}
	c.clientProps, c.mechanism = startOk.ClientProperties, startOk.Mechanism
	refuse := func() error {
		c.log.Info("login refused", "user", user, "mechanism", startOk.Mechanism)
		if authFailureClose {
			c.send(0, &wire.ConnectionClose{ReplyCode: wire.AccessRefused, ReplyText: wire.ReplyText(wire.AccessRefused,
				"Login was refused using authentication mechanism "+startOk.Mechanism+". For details see the broker logfile.")})
		}
		return errClosed
	}
	// A user of a sandbox's own logs in there, at connection.open
	// (Config.UserElsewhere); anyone else this server refuses is refused
	// now, as RabbitMQ does.
	if c.user == nil && !(ok && c.s.cfg.UserElsewhere != nil && c.s.cfg.UserElsewhere(user, pass)) {
		return refuse()
	}
	c.send(0, &wire.ConnectionTune{ChannelMax: serverChannelMax, FrameMax: serverFrameMax, Heartbeat: serverHeartbeat})
	if m, err = c.readMethod(); err != nil {
		return err
	}
	tuneOk, ok := m.(*wire.ConnectionTuneOk)
	if !ok {
		return connectionError(wire.CommandInvalid, "expected 'connection.tune_ok'")
	}
	switch {
	case tuneOk.FrameMax != 0 && tuneOk.FrameMax < wire.FrameMinSize:
		return connectionError(wire.NotAllowed, "frame_max=%d < %d min size", tuneOk.FrameMax, wire.FrameMinSize)
	case tuneOk.FrameMax > serverFrameMax:
		return connectionError(wire.NotAllowed, "frame_max=%d > %d max size", tuneOk.FrameMax, serverFrameMax)
	case tuneOk.ChannelMax > serverChannelMax:
		return connectionError(wire.NotAllowed, "channel_max=%d > %d max size", tuneOk.ChannelMax, serverChannelMax)
	}
	if tuneOk.FrameMax != 0 {
		c.frameMax = tuneOk.FrameMax
	}
	c.channelMax = tuneOk.ChannelMax
	if c.channelMax == 0 {
		c.channelMax = serverChannelMax
	}
	c.heartbeat = time.Duration(tuneOk.Heartbeat) * time.Second
	c.r.SetMaxFrame(c.frameMax)
	if m, err = c.readMethod(); err != nil {
		return err
	}
	open, ok := m.(*wire.ConnectionOpen)
	if !ok {
		return connectionError(wire.CommandInvalid, "expected 'connection.open'")
	}
	if t := c.s.worldOf(open.VirtualHost); t != c.s {
		if err := c.moveTo(t, open.VirtualHost, user, pass); err != nil {
			return err
		}
	}
	if c.user == nil {
		// Another world's user, opening a vhost of this one: refused as
		// moveTo refuses a login, with a connection.close.
		c.log.Info("login refused", "user", user, "mechanism", c.mechanism, "vhost", open.VirtualHost)
		return &amqpError{code: wire.AccessRefused, conn: true, text: wire.ReplyText(wire.AccessRefused,
			"Login was refused using authentication mechanism "+c.mechanism+". For details see the broker logfile.")}
	}
	if c.s.lookupVhost(open.VirtualHost) == nil {
		return connectionError(wire.NotAllowed, "vhost %s not found", open.VirtualHost)
	}
	if _, ok := c.user.Permissions[open.VirtualHost]; !ok {
		return connectionError(wire.NotAllowed, "access to vhost '%s' refused for user '%s'", open.VirtualHost, c.user.Name)
	}
	if !c.s.openIn(c, open.VirtualHost) {
		return connectionError(wire.NotAllowed, "vhost %s not found", open.VirtualHost)
	}
	c.send(0, &wire.ConnectionOpenOk{})
	return nil
}

// moveTo hands the connection, at its connection.open, to server t (the
// world whose vhost it opens, Config.Resolve): the user logs in again there
// with the credentials of start-ok, and from then on t's users, vhosts,
// wait group, connection table and Close are the connection's; nothing of
// it stays in the server it came in by. The tuning and the counters stay;
// the connection gets a number, and a log, of t's. Only the serving
// goroutine runs it, before the connection is open: c.s is then read by
// another goroutine only in forceClose, which takes c.mu as the change
// does.
func (c *conn) moveTo(t *Server, vh, user, pass string) error {
	u := t.authenticate(user, pass)
	if u == nil {
		c.log.Info("login refused", "user", user, "mechanism", c.mechanism, "vhost", vh)
		return &amqpError{code: wire.AccessRefused, conn: true, text: wire.ReplyText(wire.AccessRefused,
			"Login was refused using authentication mechanism "+c.mechanism+". For details see the broker logfile.")}
	}
	if !t.admit(c) {
		// That world is closing: its vhost is as good as gone.
		return connectionError(wire.NotAllowed, "vhost %s not found", vh)
	}
	from, log := c.s, t.connLog(c.nc)
	c.mu.Lock()
	forced := c.forced != ""
	if !forced {
		c.s, c.user, c.log = t, u, log
	}
	c.mu.Unlock()
	if forced {
		// A close of the server it came in by reached it first: that server
		// keeps it until it ends.
		t.release(c)
		return errClosed
	}
	from.release(c)
	return nil
}

// parseAMQPLAIN reads an AMQPLAIN response: a field table without its
// length prefix, holding LOGIN and PASSWORD.
func parseAMQPLAIN(resp string) (user, pass string, ok bool) {
	b := make([]byte, 4, 4+len(resp))
	b[0], b[1], b[2], b[3] = byte(len(resp)>>24), byte(len(resp)>>16), byte(len(resp)>>8), byte(len(resp))
	t, _, err := wire.ReadTable(append(b, resp...))
	if err != nil {
		return "", "", false
	}
	user, uok := t["LOGIN"].(string)
	pass, pok := t["PASSWORD"].(string)
	return user, pass, uok && pok
}

// heartbeats sends a heartbeat when the server has sent nothing for half
// the interval, and closes a connection that sent nothing for two
// intervals (RabbitMQ's "missed heartbeats from client").
func (c *conn) heartbeats() {
	defer c.s.wg.Done()
	tick := time.NewTicker(c.heartbeat / 2)
	defer tick.Stop()
	lastRead, lastWritten := c.framesRead.Load(), c.w.written.Load()
	var silentFor time.Duration
	for {
		select {
		case <-c.closed:
			return
		case <-tick.C:
		}
		if w := c.w.written.Load(); w == lastWritten {
			c.w.write(func(b []byte) []byte { return wire.AppendFrame(b, wire.FrameHeartbeat, 0, nil) })
		} else {
			lastWritten = w
		}
		if r := c.framesRead.Load(); r != lastRead {
			lastRead, silentFor = r, 0
			continue
		}
		if silentFor += c.heartbeat / 2; silentFor >= 2*c.heartbeat {
			c.log.Info("missed heartbeats from client", "timeout", c.heartbeat)
			c.nc.Close()
			return
		}
	}
}

// frame handles one frame after the handshake.
func (c *conn) frame(f wire.Frame) error {
	switch f.Type {
	case wire.FrameHeartbeat:
		return nil
	case wire.FrameMethod:
		if f.Channel == 0 {
			return c.connectionMethod(f.Payload)
		}
	}
	c.mu.Lock()
	ch := c.channels[f.Channel]
	c.mu.Unlock()
	if ch == nil {
		if f.Type != wire.FrameMethod {
			return connectionError(wire.ChannelError, "expected 'channel.open'")
		}
		m, err := wire.ReadMethod(f.Payload)
		if err != nil {
			return err
		}
		if _, ok := m.(*wire.ChannelOpen); !ok {
			// RabbitMQ names the method it got instead, as it does for
			// every error a method causes (difftest's
			// CloseAfterCloseOkIsAChannelError).
			e := connectionError(wire.ChannelError, "expected 'channel.open'")
			e.classID, e.methodID, _ = wire.PeekMethod(f.Payload)
			return e
		}
		return c.openChannel(f.Channel)
	}
	return ch.frame(f)
}

// connectionMethod handles a method on channel 0.
func (c *conn) connectionMethod(payload []byte) error {
	m, err := wire.ReadMethod(payload)
	if err != nil {
		return err
	}
	switch m.(type) {
	case *wire.ConnectionClose:
		c.teardown()
		c.send(0, &wire.ConnectionCloseOk{})
		return errClosed
	case *wire.ConnectionCloseOk:
		return errClosed
	case *wire.ConnectionBlocked, *wire.ConnectionUnblocked:
		return nil
	case *wire.ConnectionUpdateSecret:
		c.send(0, &wire.ConnectionUpdateSecretOk{})
		return nil
	}
	cls, mid := m.ClassMethod()
	return &amqpError{code: wire.CommandInvalid, conn: true, classID: cls, methodID: mid,
		text: "COMMAND_INVALID - unexpected method on channel 0"}
}

// openChannel opens channel id.
func (c *conn) openChannel(id uint16) error {
	if id > c.channelMax {
		return connectionError(wire.NotAllowed, "number of channels opened (%d) has reached the negotiated channel_max (%d)",
			len(c.channels), c.channelMax)
	}
	ch := newChannel(c, id)
	c.mu.Lock()
	c.channels[id] = ch
	c.mu.Unlock()
	c.send(id, &wire.ChannelOpenOk{})
	return nil
}

// dropChannel forgets a closed channel.
func (c *conn) dropChannel(ch *channel) {
	c.mu.Lock()
	if c.channels[ch.id] == ch {
		delete(c.channels, ch.id)
	}
	c.mu.Unlock()
}

func (c *conn) addExclusive(q *queue) {
	c.mu.Lock()
	c.exclusive = append(c.exclusive, q)
	c.mu.Unlock()
}

func (c *conn) removeExclusive(q *queue) {
	c.mu.Lock()
	c.exclusive = slices.DeleteFunc(c.exclusive, func(o *queue) bool { return o == q })
	c.mu.Unlock()
}

// teardown closes every channel (requeueing their unacked messages, RB-6)
// and deletes the connection's exclusive queues. It runs once.
func (c *conn) teardown() {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		chans := make([]*channel, 0, len(c.channels))
		for _, ch := range c.channels {
			chans = append(chans, ch)
		}
		c.channels = map[uint16]*channel{}
		c.mu.Unlock()
		for _, ch := range chans {
			ch.shutdown()
		}
		c.mu.Lock()
		excl := slices.Clone(c.exclusive)
		c.mu.Unlock()
		if len(excl) > 0 {
			c.s.topoMu.Lock()
			for _, q := range excl {
				c.s.removeQueue(q)
			}
			c.s.topoMu.Unlock()
		}
	})
}

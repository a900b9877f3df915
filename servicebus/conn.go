package servicebus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// Connection limits lapse advertises.
const (
	ourMaxFrameSize = 256 * 1024
	ourChannelMax   = 4999
	// ourIdleTimeout is the idle time-out lapse advertises: a client that
	// sends nothing for twice as long is dropped.
	ourIdleTimeout = 120 * time.Second
	// handshakeTimeout bounds SASL and open.
	handshakeTimeout = 30 * time.Second
	// maxKeepAlive caps the interval of our empty frames, well within any
	// peer's idle time-out (go-amqp reads with a 60 s deadline).
	maxKeepAlive = 15 * time.Second
)

// conn is one AMQP 1.0 connection: one goroutine reads and dispatches
// frames, one writes what the others queue and the empty frames that keep
// the connection alive; while deliveries the client sent wait for their
// commits, an acker answers them (ack.go). Each goroutine costs its stack:
// an idle connection runs two (issue 25.8).
type conn struct {
	// sp is the server the connection is served by: the one whose
	// ServeConn took it, until a key name of another world moves it
	// (moveTo, world.go).
	sp  atomic.Pointer[Server]
	nc  net.Conn
	id  uint64
	log *slog.Logger
	br  connReader

	wmu  lockorder.Mutex // guards wbuf and the write counts below
	wbuf []byte
	// taken counts the buffers taken from wbuf to write, written those
	// whose write ended; writtenCh, made by a waitWritten, is closed when
	// written grows. All three are guarded by wmu.
	taken, written uint64
	writtenCh      chan struct{}
	iomu           lockorder.Mutex // keeps writes to nc in the order they were queued
	wsig           chan struct{}
	lastWrite      atomic.Int64 // unix nanoseconds, real time
	// keepAlive is the interval of the empty frames the writer sends
	// when nothing else was written for as long, 0 for none (open).
	keepAlive atomic.Int64

	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	// ctx ends with the connection, for waits on commits.
	ctx    context.Context
	cancel context.CancelFunc

	peerMaxFrame uint32
	hostname     string
	plainAuthed  bool // SASL PLAIN with a valid key
	// bound is set, by the reader only, once the connection has proved a
	// key of its server's (SASL PLAIN or a valid CBS token): from then on
	// it stays in that server's world (world.go).
	bound bool

	smu      lockorder.Mutex
	sessions map[uint16]*session

	amu    lockorder.Mutex
	claims []claim

	// The outcomes of deliveries the client sent unsettled, waiting for
	// their commits (ack.go); acking is set while an acker runs.
	ackMu      lockorder.Mutex
	ackRoom    sync.Cond // signalled when the acker takes from acks
	acks       []pendingAck
	acking     bool
	ackStopped bool

	// held are the session receivers that hold a session, by link name
	// (sessionlink.go).
	hmu  lockorder.Mutex
	held map[string]*link

	// txns are the open transactions declared on the connection's
	// coordinator links, by txn-id (txn.go).
	txmu lockorder.Mutex
	txns map[string]*txn

	// opened is set once the open frames are exchanged (Connections).
	opened atomic.Bool
}

// claim is a CBS token the client put: its audience path and expiry.
type claim struct {
	path    string
	expires time.Time
}

func (s *Server) newConn(nc net.Conn) *conn {
	id := s.nconn.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		nc: nc, id: id, ctx: ctx, cancel: cancel,
		log:          s.log().With("conn", id, "remote", nc.RemoteAddr().String()),
		wsig:         make(chan struct{}, 1),
		done:         make(chan struct{}),
		peerMaxFrame: 512,
		sessions:     map[uint16]*session{},
	}
	c.sp.Store(s)
	c.br = connReader{rd: nc, pool: &s.readBufs}
	c.ackRoom.L = &c.ackMu
	return c
}

// srv is the server the connection is served by.
func (c *conn) srv() *Server { return c.sp.Load() }

// serve runs the connection until it closes.
func (c *conn) serve(header [8]byte) {
	defer c.shutdown()
	c.log.Debug("connection opened")
	c.wg.Add(1)
	go c.writer()
	c.nc.SetReadDeadline(time.Now().Add(handshakeTimeout))
	if header == amqp.HeaderSASL {
		if err := c.sasl(); err != nil {
			c.log.Debug("SASL failed", "err", err)
			return
		}
		if _, err := io.ReadFull(&c.br, header[:]); err != nil {
			return
		}
	}
	if header != amqp.HeaderAMQP {
		// The header lapse speaks, then the end (AMQP 1.0 §2.2): it is
		// written before the connection closes, which a header that
		// came over a WebSocket (the AMQP ports answer the others
		// themselves) or after SASL would otherwise race.
		c.rawWrite(amqp.HeaderAMQP[:])
		c.flushNow()
		return
	}
	c.rawWrite(amqp.HeaderAMQP[:])
	if err := c.open(); err != nil {
		c.log.Debug("open failed", "err", err)
		return
	}
	c.opened.Store(true)
	c.readLoop()
}

// Connections returns the number of client connections past their
// handshake: SASL and the exchange of open frames.
func (s *Server) Connections() int {
	n := 0
	s.conns.Range(func(k, _ any) bool {
		if k.(*conn).opened.Load() {
			n++
		}
		return true
	})
	return n
}

// sasl runs the SASL exchange (§5.3): ANONYMOUS, as the SDKs use with CBS,
// and PLAIN with a key name and key as user name and password.
func (c *conn) sasl() error {
	c.rawWrite(amqp.HeaderSASL[:])
	c.writeFrame(amqp.FrameSASL, 0, &amqp.SASLMechanisms{Mechanisms: []amqp.Symbol{"ANONYMOUS", "PLAIN", "MSSBCBS"}})
	f, _, err := amqp.ReadFrame(&c.br, nil, ourMaxFrameSize)
	if err != nil {
		return err
	}
	init, ok := f.Body.(*amqp.SASLInit)
	if !ok || f.Type != amqp.FrameSASL {
		return fmt.Errorf("expected sasl-init, got %T", f.Body)
	}
	code := uint8(0)
	switch init.Mechanism {
	case "ANONYMOUS", "MSSBCBS":
	case "PLAIN":
		parts := bytes.SplitN(init.InitialResponse, []byte{0}, 3)
		code = 1
		if len(parts) == 3 {
			name, value := string(parts[1]), string(parts[2])
			s := c.srv()
			to := s.world(name)
			if to != nil {
				s = to // the key is checked with the keys of its world
			}
			if slices.Contains(s.cfg.Keys, sas.Key{Name: name, Value: value}) && (to == nil || c.moveTo(to, name)) {
				code, c.plainAuthed, c.bound = 0, true, true
			}
		}
	default:
		code = 1
	}
	c.writeFrame(amqp.FrameSASL, 0, &amqp.SASLOutcome{Code: code})
	c.flushNow()
	if code != 0 {
		return errors.New("SASL authentication failed")
	}
	return nil
}

// open exchanges open frames.
func (c *conn) open() error {
	f, _, err := amqp.ReadFrame(&c.br, nil, ourMaxFrameSize)
	if err != nil {
		return err
	}
	o, ok := f.Body.(*amqp.Open)
	if !ok {
		c.closeWith(&amqp.Error{Condition: condFramingError, Description: "expected an open frame"})
		return fmt.Errorf("expected open, got %T", f.Body)
	}
	if o.MaxFrameSize >= 512 {
		c.peerMaxFrame = min(o.MaxFrameSize, ourMaxFrameSize)
	} else if o.MaxFrameSize == 0 {
		c.peerMaxFrame = ourMaxFrameSize
	}
	c.hostname = o.Hostname
	if o.IdleTimeOut > 0 {
		// set before our open is queued, so that the writer, woken for
		// it, finds it
		every := time.Duration(o.IdleTimeOut) * time.Millisecond / 2
		every = min(every, maxKeepAlive)
		every = max(every, 100*time.Millisecond)
		c.keepAlive.Store(int64(every))
	}
	props := amqp.Map{
		{Key: amqp.Symbol("product"), Value: "lapse"},
		{Key: amqp.Symbol("version"), Value: c.srv().cfg.Version},
	}
	chMax := uint16(ourChannelMax)
	c.writeFrame(amqp.FrameAMQP, 0, &amqp.Open{
		ContainerID:  c.srv().cfg.Namespace,
		Hostname:     o.Hostname,
		MaxFrameSize: ourMaxFrameSize,
		ChannelMax:   &chMax,
		IdleTimeOut:  uint32(ourIdleTimeout / time.Millisecond),
		Properties:   props,
	})
	return nil
}

// maxIdleFrameBuffer is the largest frame buffer a connection keeps while
// it waits for its next frame; a larger one, which a large message made,
// goes (issue 25.8).
const maxIdleFrameBuffer = 4 << 10

// readLoop reads frames until the connection ends.
func (c *conn) readLoop() {
	var buf []byte
	for {
		c.nc.SetReadDeadline(time.Now().Add(2 * ourIdleTimeout))
		if c.br.buffered() == 0 && cap(buf) > maxIdleFrameBuffer {
			buf = nil
		}
		var f amqp.Frame
		err := c.br.wait()
		if err == nil {
			f, buf, err = amqp.ReadFrame(&c.br, buf, ourMaxFrameSize)
		}
		if err != nil {
			var de *amqp.DecodeError
			if errors.As(err, &de) {
				cond := condDecode
				if de.Framing {
					cond = condFramingError // §2.7.1: a frame over max-frame-size
				}
				c.closeWith(&amqp.Error{Condition: cond, Description: de.Error()})
			} else if !isClosedErr(err) {
				c.log.Debug("read failed", "err", err)
			}
			return
		}
		if f.Body == nil {
			continue // empty frame: keep-alive
		}
		if f.Type != amqp.FrameAMQP {
			c.closeWith(&amqp.Error{Condition: condFramingError, Description: "a SASL frame after the SASL exchange"})
			return
		}
		if !c.dispatch(f) {
			return
		}
	}
}

// dispatch handles one frame; false ends the connection.
func (c *conn) dispatch(f amqp.Frame) (cont bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic serving a frame", "panic", r, "frame", fmt.Sprintf("%T", f.Body))
			c.closeWith(&amqp.Error{Condition: condInternal, Description: "The service was unable to process the request."})
			cont = false
		}
	}()
	switch b := f.Body.(type) {
	case *amqp.Close:
		c.writeFrame(amqp.FrameAMQP, 0, &amqp.Close{})
		c.flushNow()
		return false
	case *amqp.Open:
		c.closeWith(&amqp.Error{Condition: condFramingError, Description: "a second open frame"})
		return false
	case *amqp.Begin:
		c.begin(f.Channel, b)
		return true
	}
	c.smu.Lock()
	ss := c.sessions[f.Channel]
	c.smu.Unlock()
	if ss == nil {
		switch f.Body.(type) {
		case *amqp.Detach, *amqp.End:
			// A client that ends a session while lapse's answer to one
			// of its links crosses the end may still detach that link
			// (rhea does, when it gives up on a session receiver): the
			// service drops a detach or an end for a session that is
			// gone, rather than lose the whole connection.
			c.log.Debug("a frame for a session already ended, dropped", "channel", f.Channel, "frame", fmt.Sprintf("%T", f.Body))
			return true
		}
		c.closeWith(&amqp.Error{Condition: amqp.Symbol("amqp:connection:framing-error"), Description: fmt.Sprintf("channel %d has no session", f.Channel)})
		return false
	}
	return ss.handle(f)
}

// begin starts a session on channel ch; lapse answers on the same channel
// number.
func (c *conn) begin(ch uint16, b *amqp.Begin) {
	c.smu.Lock()
	if c.sessions[ch] != nil || ch > ourChannelMax {
		c.smu.Unlock()
		c.closeWith(&amqp.Error{Condition: amqp.Symbol("amqp:connection:framing-error"), Description: fmt.Sprintf("channel %d is in use or out of range", ch)})
		return
	}
	ss := newSession(c, ch, b)
	c.sessions[ch] = ss
	c.smu.Unlock()
	remote, hmax := ch, uint32(handleMax)
	c.writeFrame(amqp.FrameAMQP, ch, &amqp.Begin{
		RemoteChannel:  &remote,
		NextOutgoingID: 0,
		IncomingWindow: sessionWindow,
		OutgoingWindow: sessionWindow,
		HandleMax:      &hmax,
	})
}

func (c *conn) endSession(ch uint16) {
	c.smu.Lock()
	ss := c.sessions[ch]
	delete(c.sessions, ch)
	c.smu.Unlock()
	if ss != nil {
		ss.stop()
	}
}

// writeFrame queues a frame for the writer.
func (c *conn) writeFrame(typ amqp.FrameType, ch uint16, p amqp.Performative) {
	c.wmu.Lock()
	var err error
	c.wbuf, err = amqp.AppendFrame(c.wbuf, typ, ch, p, nil)
	c.wmu.Unlock()
	if err != nil {
		c.log.Error("encoding a frame", "err", err, "frame", fmt.Sprintf("%T", p))
		return
	}
	c.kick()
}

// writeTransfer queues a delivery, split into frames of the peer's
// max-frame-size; the frames of one delivery stay together. It returns
// how many transfer frames it queued, which the session counts in its
// next-outgoing-id (§2.5.6).
func (c *conn) writeTransfer(ch uint16, t *amqp.Transfer, payload []byte) (int, error) {
	c.wmu.Lock()
	defer c.kick()
	defer c.wmu.Unlock()
	head, err := t.AppendTo(nil)
	if err != nil {
		return 0, err
	}
	room := int(c.peerMaxFrame) - 8 - len(head) - 8
	if len(payload) <= room {
		c.wbuf, err = amqp.AppendFrame(c.wbuf, amqp.FrameAMQP, ch, t, payload)
		return 1, err
	}
	first := *t
	first.More = true
	c.wbuf, err = amqp.AppendFrame(c.wbuf, amqp.FrameAMQP, ch, &first, payload[:room])
	if err != nil {
		return 0, err
	}
	frames := 1
	payload = payload[room:]
	for len(payload) > 0 {
		next := amqp.Transfer{Handle: t.Handle}
		h, _ := next.AppendTo(nil)
		n := min(len(payload), int(c.peerMaxFrame)-8-len(h)-8)
		next.More = n < len(payload)
		c.wbuf, err = amqp.AppendFrame(c.wbuf, amqp.FrameAMQP, ch, &next, payload[:n])
		if err != nil {
			return frames, err
		}
		frames++
		payload = payload[n:]
	}
	return frames, nil
}

func (c *conn) rawWrite(b []byte) {
	c.wmu.Lock()
	c.wbuf = append(c.wbuf, b...)
	c.wmu.Unlock()
	c.kick()
}

func (c *conn) kick() {
	select {
	case c.wsig <- struct{}{}:
	default:
	}
}

// flushNow writes what is queued before returning (the handshake, close).
func (c *conn) flushNow() {
	c.iomu.Lock()
	defer c.iomu.Unlock()
	c.wmu.Lock()
	b := c.wbuf
	c.wbuf = nil
	g := c.take(b)
	c.wmu.Unlock()
	if len(b) > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.nc.Write(b)
		c.lastWrite.Store(time.Now().UnixNano())
		c.wrote(g)
	}
}

// take counts buffer b taken from wbuf to write, when it holds anything,
// and returns its number. The caller holds wmu.
func (c *conn) take(b []byte) uint64 {
	if len(b) > 0 {
		c.taken++
	}
	return c.taken
}

// wrote records that the write of buffer g ended, and wakes waitWritten.
func (c *conn) wrote(g uint64) {
	c.wmu.Lock()
	c.written = max(c.written, g)
	if c.writtenCh != nil {
		close(c.writtenCh)
		c.writtenCh = nil
	}
	c.wmu.Unlock()
}

// waitWritten waits until what was queued before the call has been
// written to the socket, or until the deadline or the connection's end.
// What tells clients something on the server's own initiative (the detach
// of a lost session or of a deleted entity) waits for it, so that the
// control call or hook that caused it returns after the clients could
// have read it.
func (c *conn) waitWritten(deadline time.Time) {
	c.wmu.Lock()
	target := c.taken
	if len(c.wbuf) > 0 {
		target++ // the next buffer taken holds what is queued now
	}
	c.wmu.Unlock()
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()
	for {
		c.wmu.Lock()
		if c.written >= target {
			c.wmu.Unlock()
			return
		}
		if c.writtenCh == nil {
			c.writtenCh = make(chan struct{})
		}
		ch := c.writtenCh
		c.wmu.Unlock()
		select {
		case <-ch:
		case <-c.done:
			return
		case <-timeout.C:
			return
		}
	}
}

// writer writes queued frames, as many as have gathered at a time, and an
// empty frame when nothing else was written for the keep-alive interval.
func (c *conn) writer() {
	defer c.wg.Done()
	var spare []byte
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	var tick <-chan time.Time // nil until the keep-alive interval is known
	var every time.Duration
	for {
		select {
		case <-c.done:
			c.flushNow()
			return
		case <-c.wsig:
		case <-tick:
			if time.Since(time.Unix(0, c.lastWrite.Load())) < every {
				continue
			}
			c.wmu.Lock()
			c.wbuf, _ = amqp.AppendFrame(c.wbuf, amqp.FrameAMQP, 0, nil, nil)
			c.wmu.Unlock()
		}
		if tick == nil {
			if every = time.Duration(c.keepAlive.Load()); every > 0 {
				ticker = time.NewTicker(every)
				tick = ticker.C
			}
		}
		c.iomu.Lock()
		c.wmu.Lock()
		b := c.wbuf
		c.wbuf = spare[:0]
		g := c.take(b)
		c.wmu.Unlock()
		if len(b) == 0 {
			c.iomu.Unlock()
			spare = b
			continue
		}
		c.nc.SetWriteDeadline(time.Now().Add(2 * ourIdleTimeout))
		_, err := c.nc.Write(b)
		c.iomu.Unlock()
		c.wrote(g)
		if err != nil {
			c.nc.Close()
			return
		}
		c.lastWrite.Store(time.Now().UnixNano())
		if cap(b) <= 1<<20 {
			spare = b
		} else {
			spare = nil
		}
	}
}

// closeWith closes the connection with an error (§2.4.3).
func (c *conn) closeWith(e *amqp.Error) {
	c.log.Debug("closing the connection", "condition", e.Condition, "description", e.Description)
	c.writeFrame(amqp.FrameAMQP, 0, &amqp.Close{Error: e})
	c.flushNow()
	c.nc.Close()
}

// forceClose closes the connection from another goroutine.
func (c *conn) forceClose(reason string) {
	c.closeWith(&amqp.Error{Condition: condConnForced, Description: "The connection was closed by the server: " + reason + "."})
}

// shutdown ends every session and waits for the connection's goroutines.
func (c *conn) shutdown() {
	c.closeOnce.Do(func() { close(c.done) })
	c.cancel()
	c.stopAcks()
	c.nc.Close()
	c.smu.Lock()
	ss := make([]*session, 0, len(c.sessions))
	for _, s := range c.sessions {
		ss = append(ss, s)
	}
	c.sessions = map[uint16]*session{}
	c.smu.Unlock()
	for _, s := range ss {
		s.stop()
	}
	c.wg.Wait()
	c.dropTxns(nil)
	c.br.release()
	c.log.Debug("connection closed")
}

// authorized reports whether the connection may use the entity at path:
// it logged in with PLAIN, or put a CBS token whose audience covers path.
func (c *conn) authorized(path string) bool {
	if c.plainAuthed {
		return true
	}
	now := time.Now() // tokens expire on the wall clock, see cbsRequest
	c.amu.Lock()
	defer c.amu.Unlock()
	p := fold(path)
	for _, cl := range c.claims {
		// a claim covers its path and what is below it (a dead-letter
		// queue); one on "<entity>/$management" covers the entity too
		if cl.expires.After(now) && (cl.path == "" || p == cl.path || strings.HasPrefix(p, cl.path+"/") ||
			cl.path == p+"/$management") {
			return true
		}
	}
	return false
}

// addClaim records a CBS token for an audience.
func (c *conn) addClaim(audience string, expires time.Time) {
	path := audience
	if i := strings.Index(path, "://"); i >= 0 {
		path = path[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j+1:]
		} else {
			path = ""
		}
	}
	path = fold(strings.Trim(path, "/"))
	c.amu.Lock()
	c.claims = append(c.claims, claim{path: path, expires: expires})
	if len(c.claims) > 1024 { // a long-lived connection re-puts tokens: keep the newest
		c.claims = append([]claim(nil), c.claims[len(c.claims)-512:]...)
	}
	c.amu.Unlock()
}

func isClosedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF)
}

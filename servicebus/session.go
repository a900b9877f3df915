package servicebus

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// Session and link windows lapse grants.
const (
	sessionWindow = 1 << 16
	handleMax     = 1<<16 - 1
	linkCredit    = 1000
)

// session is an AMQP session (§2.5): its links, its transfer windows and
// the deliveries it sent that the client has not settled.
type session struct {
	c  *conn
	ch uint16
	// entityLinked is set once a link to a queue, topic or subscription
	// is attached on the session: a coordinator attached before that
	// serves transactions across the entities of the session's links
	// (txn.go).
	entityLinked atomic.Bool

	mu    lockorder.Mutex
	cond  *sync.Cond       // signalled when the peer's window opens or the session stops
	links map[uint32]*link // by the peer's handle
	names map[string]*link
	next  uint32 // our next link handle
	// detached are the peer's handles of links the server detached (or
	// refused on attach) whose detach the client has yet to answer.
	detached map[uint32]struct{}
	// answers are closed when the client answers a detach of the server's
	// own (removeLink), by the peer's handle, or when the session ends:
	// detach, in sessionwatch.go, waits for them.
	answers map[uint32]chan struct{}

	nextIncomingID uint32
	incomingWindow uint32

	nextOutgoingID       uint32
	nextDeliveryID       uint32
	remoteIncomingWindow uint32
	unsettled            map[uint32]*outDelivery
	stopped              bool
}

// outDelivery is a message the session sent locked and the client has not
// settled yet.
type outDelivery struct {
	l     *link
	token amqp.UUID
}

func newSession(c *conn, ch uint16, b *amqp.Begin) *session {
	ss := &session{
		c: c, ch: ch,
		links:                map[uint32]*link{},
		names:                map[string]*link{},
		detached:             map[uint32]struct{}{},
		answers:              map[uint32]chan struct{}{},
		incomingWindow:       sessionWindow,
		remoteIncomingWindow: b.IncomingWindow,
		unsettled:            map[uint32]*outDelivery{},
	}
	ss.cond = sync.NewCond(&ss.mu)
	ss.nextIncomingID = b.NextOutgoingID
	return ss
}

// handle serves one frame of the session; false ends the connection.
func (ss *session) handle(f amqp.Frame) bool {
	switch b := f.Body.(type) {
	case *amqp.Attach:
		ss.attach(b)
	case *amqp.Flow:
		ss.flow(b)
	case *amqp.Transfer:
		return ss.transfer(b, f.Payload)
	case *amqp.Disposition:
		ss.disposition(b)
	case *amqp.Detach:
		ss.detach(b)
	case *amqp.End:
		// stopped first, so that no frame of the session follows its end
		// (go-amqp fails the connection on a frame for a channel it ended)
		ss.c.endSession(ss.ch)
		ss.c.writeFrame(amqp.FrameAMQP, ss.ch, &amqp.End{})
	default:
		ss.c.closeWith(&amqp.Error{Condition: condFramingError, Description: fmt.Sprintf("unexpected frame %T", f.Body)})
		return false
	}
	return true
}

// flowFrame fills in the session's part of a flow frame; call with ss.mu.
func (ss *session) flowFrameLocked(f *amqp.Flow) *amqp.Flow {
	nid := ss.nextIncomingID
	f.NextIncomingID = &nid
	f.IncomingWindow = ss.incomingWindow
	f.NextOutgoingID = ss.nextOutgoingID
	f.OutgoingWindow = sessionWindow
	return f
}

// sendFlow sends a flow frame with the session's state and f's link part.
func (ss *session) sendFlow(f *amqp.Flow) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stopped {
		return
	}
	ss.flowFrameLocked(f)
	ss.c.writeFrame(amqp.FrameAMQP, ss.ch, f)
}

// writeFor sends a frame about link l (a flow, a disposition) unless the
// session has ended or l is no longer attached: go-amqp ends the session
// on a frame for a handle it has let go, and a goroutine other than the
// connection's reader (a link's pump, the acker) may come after the
// detach. A flow frame gets the session's window.
func (ss *session) writeFor(l *link, p amqp.Performative) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stopped || ss.links[l.peerHandle] != l {
		return
	}
	if f, ok := p.(*amqp.Flow); ok {
		ss.flowFrameLocked(f)
	}
	ss.c.writeFrame(amqp.FrameAMQP, ss.ch, p)
}

// write sends frames of the session, in order, unless the session has
// ended: a goroutine other than the connection's reader writes through it,
// so that nothing follows the session's end.
func (ss *session) write(ps ...amqp.Performative) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stopped {
		return
	}
	for _, p := range ps {
		ss.c.writeFrame(amqp.FrameAMQP, ss.ch, p)
	}
}

// flow reads the peer's flow frame: its session window, and a link's
// credit when it names one.
func (ss *session) flow(f *amqp.Flow) {
	ss.mu.Lock()
	if f.NextIncomingID != nil {
		ss.remoteIncomingWindow = *f.NextIncomingID + f.IncomingWindow - ss.nextOutgoingID
	} else {
		ss.remoteIncomingWindow = f.IncomingWindow - ss.nextOutgoingID
	}
	ss.cond.Broadcast()
	var l *link
	detaching := false
	if f.Handle != nil {
		l = ss.links[*f.Handle]
		_, detaching = ss.detached[*f.Handle]
	}
	ss.mu.Unlock()
	if f.Handle == nil {
		if f.Echo {
			ss.sendFlow(&amqp.Flow{})
		}
		return
	}
	if l == nil && detaching {
		return // sent before the client saw the server's detach (§2.6.5)
	}
	if l == nil {
		ss.errorEnd(condUnattached, fmt.Sprintf("flow for handle %d, which is not attached", *f.Handle))
		return
	}
	l.flow(f)
}

// transfer takes a transfer frame for one of the session's links.
func (ss *session) transfer(t *amqp.Transfer, payload []byte) bool {
	ss.mu.Lock()
	ss.nextIncomingID++
	if ss.incomingWindow == 0 {
		ss.mu.Unlock()
		ss.errorEnd(condWindowViolation, "a transfer beyond the session's incoming window")
		return true
	}
	ss.incomingWindow--
	refill := ss.incomingWindow < sessionWindow/2
	if refill {
		ss.incomingWindow = sessionWindow
	}
	l := ss.links[t.Handle]
	_, detaching := ss.detached[t.Handle]
	ss.mu.Unlock()
	if refill {
		ss.sendFlow(&amqp.Flow{})
	}
	if l == nil && detaching {
		return true // sent before the client saw the server's detach (§2.6.5)
	}
	if l == nil {
		ss.errorEnd(condUnattached, fmt.Sprintf("transfer for handle %d, which is not attached", t.Handle))
		return true
	}
	l.transfer(t, payload)
	return true
}

// sendDelivery sends a message on one of the session's sending links,
// waiting for the peer's session window. A locked delivery is kept until
// the client settles it.
func (ss *session) sendDelivery(l *link, tag []byte, settled bool, payload []byte, od *outDelivery) error {
	ss.mu.Lock()
	for ss.remoteIncomingWindow == 0 && !ss.stopped {
		ss.cond.Wait()
	}
	if ss.stopped || ss.links[l.peerHandle] != l {
		// Ended, or detached while this delivery was made: a transfer
		// for a handle the client has let go ends its session.
		ss.mu.Unlock()
		return errStopped
	}
	id := ss.nextDeliveryID
	ss.nextDeliveryID++
	format := uint32(0)
	st := settled
	t := &amqp.Transfer{Handle: l.handle, DeliveryID: &id, DeliveryTag: tag, MessageFormat: &format, Settled: &st}
	if od != nil {
		ss.unsettled[id] = od
	}
	n, err := ss.c.writeTransfer(ss.ch, t, payload)
	frames := uint32(n)
	ss.nextOutgoingID += frames
	if ss.remoteIncomingWindow >= frames {
		ss.remoteIncomingWindow -= frames
	} else {
		ss.remoteIncomingWindow = 0
	}
	ss.mu.Unlock()
	return err
}

// disposition settles deliveries the session sent (the client is the
// receiver) and answers when the client waits for the outcome.
func (ss *session) disposition(d *amqp.Disposition) {
	if d.Role != amqp.RoleReceiver {
		return // the client settling its own transfers after our outcome
	}
	last := d.First
	if d.Last != nil {
		last = *d.Last
	}
	if last-d.First > 1<<16 {
		last = d.First + 1<<16
	}
	for id := d.First; ; id++ {
		ss.mu.Lock()
		od := ss.unsettled[id]
		if od != nil && (d.Settled || d.State != nil) {
			delete(ss.unsettled, id)
		}
		ss.mu.Unlock()
		if od != nil && d.State != nil {
			state := od.l.settle(od, d.State)
			if !d.Settled {
				one := id
				// not for a link the server detached meanwhile (removeLink)
				ss.mu.Lock()
				if ss.links[od.l.peerHandle] == od.l {
					ss.c.writeFrame(amqp.FrameAMQP, ss.ch, &amqp.Disposition{Role: amqp.RoleSender, First: one, Settled: true, State: state})
				}
				ss.mu.Unlock()
			}
		}
		if id == last {
			break
		}
	}
}

// detach ends a link the client detaches.
func (ss *session) detach(d *amqp.Detach) {
	ss.mu.Lock()
	l := ss.links[d.Handle]
	_, answer := ss.detached[d.Handle]
	ss.answeredLocked(d.Handle)
	if l != nil {
		delete(ss.links, d.Handle)
		if ss.names[l.name] == l {
			delete(ss.names, l.name)
		}
		// Frames the client sends for the handle until it attaches it
		// again are ignored: go-amqp's receiver may still send a flow for
		// credit it reclaims from transfers that crossed its detach.
		ss.detached[d.Handle] = struct{}{}
	} else {
		delete(ss.detached, d.Handle)
	}
	ss.mu.Unlock()
	if l == nil && answer {
		return // the client answers the server's detach (§2.6.5)
	}
	if l == nil {
		ss.errorEnd(condUnattached, fmt.Sprintf("detach of handle %d, which is not attached", d.Handle))
		return
	}
	if l.cancelPending() {
		// a session receiver still waiting for a session: its goroutine
		// answers the attach and then this detach
		l.stop()
		return
	}
	l.stop()
	// the session goes back before the client hears the link is closed,
	// so that it can accept the session again at once
	l.releaseSession()
	ss.c.writeFrame(amqp.FrameAMQP, ss.ch, &amqp.Detach{Handle: l.handle, Closed: d.Closed})
}

// removeLink forgets a link the server detaches, and reports whether the
// link was still attached (the client may have detached it first); the
// client's detach that answers the server's is expected (answers). The
// link's unsettled deliveries are forgotten too: a client that settles one
// before it sees the detach gets no disposition for it (go-amqp ends the
// session on a disposition for a link it saw detached), and the link's
// detach fails the settlement; the Java SDK instead waits its try timeout
// for one, which is why the server's own detaches wait for the answer
// (sessionwatch.go).
func (ss *session) removeLink(l *link) bool {
	ss.mu.Lock()
	removed := false
	if ss.links[l.peerHandle] == l {
		delete(ss.links, l.peerHandle)
		ss.detached[l.peerHandle] = struct{}{}
		ss.answeredLocked(l.peerHandle)
		ss.answers[l.peerHandle] = make(chan struct{})
		removed = true
	}
	for id, od := range ss.unsettled {
		if od.l == l {
			delete(ss.unsettled, id)
		}
	}
	if ss.names[l.name] == l {
		delete(ss.names, l.name)
	}
	ss.mu.Unlock()
	return removed
}

// answeredLocked closes and forgets the answer channel of the peer's
// handle h, if one waits: the client answered the server's detach, used the
// handle again, or the session ended. Callers hold mu.
func (ss *session) answeredLocked(h uint32) {
	if ch, ok := ss.answers[h]; ok {
		close(ch)
		delete(ss.answers, h)
	}
}

// answerOf returns the channel closed when the client answers the server's
// detach of the link of the peer's handle h, nil when none waits.
func (ss *session) answerOf(h uint32) chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.answers[h]
}

// errorEnd ends the session with an error (§2.5.5).
func (ss *session) errorEnd(cond amqp.Symbol, desc string) {
	ss.c.endSession(ss.ch)
	ss.c.writeFrame(amqp.FrameAMQP, ss.ch, &amqp.End{Error: &amqp.Error{Condition: cond, Description: desc}})
}

// stop stops the session's links; deliveries it sent locked stay locked
// until their lock runs out or someone settles them by lock token.
func (ss *session) stop() {
	ss.mu.Lock()
	ss.stopped = true
	ls := make([]*link, 0, len(ss.links))
	for _, l := range ss.links {
		ls = append(ls, l)
	}
	ss.links = map[uint32]*link{}
	ss.names = map[string]*link{}
	ss.detached = map[uint32]struct{}{}
	for h := range ss.answers {
		ss.answeredLocked(h)
	}
	ss.cond.Broadcast()
	ss.mu.Unlock()
	for _, l := range ls {
		l.stop()
		l.releaseSession()
	}
}

// replyLink finds the link a response to a request on in goes out on: a
// sending link of the session whose source is the request link's address,
// preferring the one whose target or name is the request's reply-to.
func (ss *session) replyLink(in *link, replyTo string) *link {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var found *link
	for _, l := range ss.links {
		if l.kind != linkCBSOut && l.kind != linkMgmtOut {
			continue
		}
		if fold(l.addr) != fold(in.addr) {
			continue
		}
		if replyTo != "" && (l.target == replyTo || l.name == replyTo) {
			return l
		}
		if found == nil {
			found = l
		}
	}
	return found
}

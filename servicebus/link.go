package servicebus

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/internal/lockorder"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// linkKind is what a link is for.
type linkKind uint8

const (
	linkIn          linkKind = iota // the client sends messages to a queue or topic
	linkOut                         // the client receives messages from a queue, subscription or dead-letter queue
	linkCBSIn                       // put-token requests
	linkCBSOut                      // their responses
	linkMgmtIn                      // $management requests
	linkMgmtOut                     // their responses
	linkCoordinator                 // declares and discharges of transactions (txn.go)
)

var errStopped = errors.New("servicebus: link stopped")

// sessionFilter is the descriptor of com.microsoft:session-filter.
const sessionFilter = "com.microsoft:session-filter"

// link is one attached link of a session.
type link struct {
	ss         *session
	kind       linkKind
	name       string
	peerHandle uint32
	handle     uint32
	addr       string // target of a receiving link, source of a sending one
	target     string // a sending link's target (a reply-to address)
	path       string // the entity path
	// crossEntity marks a coordinator link attached before any link to an
	// entity on its session: its transactions may span the entities of
	// that session's links (txn.go).
	crossEntity bool
	// dest is where a send-via link's messages go (the attach's
	// com.microsoft:transfer-destination-address), through the entity of
	// path; empty for a plain sender.
	dest      string
	node      *node // a receiver's or management link's node
	sndSettle uint8
	rcvSettle uint8
	// sess is the session a session receiver holds (sessionlink.go).
	sess *sessionHold

	// a receiving link: credit left and the delivery being assembled
	credit       uint32
	inCount      uint32
	partial      []byte
	partialID    uint32
	partialSet   bool
	partialSettl bool
	partialFmt   uint32
	partialState amqp.DeliveryState // the first transfer's state (a transactional-state)
	oversized    bool

	// a sending link
	mu            lockorder.Mutex
	outCredit     uint32
	deliveryCount uint32
	drain         bool
	replies       [][]byte
	wakeCh        chan struct{}
	done          chan struct{}
	stopOnce      sync.Once
	tagSeq        uint64
	// replying is set while a receiver is its node's but its attach is
	// not answered yet; a detach meanwhile waits in detachLater for the
	// answer, which must come first.
	replying    bool
	detachLater *amqp.Error
}

// refusal makes reply the attach of a refused link (an unknown entity, a
// locked session), which a detach with the error follows: neither source
// nor target, as the service answers. Clients on go-amqp before 1.5.1
// (azservicebus 1.1 to 1.10) take an attach that keeps either terminus for
// an open link and never see the error.
func refusal(reply *amqp.Attach) {
	reply.Source, reply.Target = nil, nil
	if reply.Role == amqp.RoleSender && reply.InitialDeliveryCount == nil {
		zero := uint32(0)
		reply.InitialDeliveryCount = &zero
	}
}

func settleMode(p *uint8, def uint8) uint8 {
	if p == nil {
		return def
	}
	return *p
}

// attach serves the client's attach (§2.7.3).
func (ss *session) attach(a *amqp.Attach) {
	c := ss.c
	ss.mu.Lock()
	if _, dup := ss.links[a.Handle]; dup {
		ss.mu.Unlock()
		ss.errorEnd(condHandleInUse, fmt.Sprintf("handle %d is in use", a.Handle))
		return
	}
	handle := ss.next
	ss.next++
	ss.mu.Unlock()
	l := &link{ss: ss, name: a.Name, peerHandle: a.Handle, handle: handle,
		sndSettle: settleMode(a.SndSettleMode, amqp.SndMixed), rcvSettle: settleMode(a.RcvSettleMode, amqp.RcvFirst)}
	var err *amqp.Error
	if a.Role == amqp.RoleSender {
		err = l.setUpReceiving(a)
	} else {
		err = l.setUpSending(a)
	}
	reply := &amqp.Attach{Name: a.Name, Handle: handle, Role: !a.Role,
		SndSettleMode: a.SndSettleMode, RcvSettleMode: a.RcvSettleMode}
	var sessionUntil time.Time
	pending := false
	if err == nil && l.sess != nil {
		var aerr error
		if sessionUntil, aerr = l.acceptSession(); aerr != nil {
			if l.sess.next && core.ErrorCode(aerr) == core.ENOSESSION {
				pending = true // wait for one: awaitSession answers
			} else {
				err = amqpError(sessionError(aerr, l.sess.id))
			}
		}
	}
	if err != nil {
		refusal(reply)
		ss.mu.Lock()
		ss.detached[a.Handle] = struct{}{}
		ss.mu.Unlock()
		c.writeFrame(amqp.FrameAMQP, ss.ch, reply)
		c.writeFrame(amqp.FrameAMQP, ss.ch, &amqp.Detach{Handle: handle, Closed: true, Error: err})
		c.log.Debug("attach refused", "name", a.Name, "condition", err.Condition, "description", err.Description)
		return
	}
	reply.Source, reply.Target, reply.Coordinator = a.Source, a.Target, a.Coordinator
	if l.dest != "" {
		reply.Properties = amqp.Map{{Key: amqp.Symbol(propTransferDestination), Value: l.dest}}
	}
	if a.Role == amqp.RoleSender {
		reply.MaxMessageSize = uint64(c.srv().cfg.MaxMessageSize)
		if l.kind != linkIn {
			reply.MaxMessageSize = uint64(ourMaxFrameSize) * 16
		}
	} else {
		zero := uint32(0)
		reply.InitialDeliveryCount = &zero
		reply.MaxMessageSize = a.MaxMessageSize
		if l.kind == linkOut && a.Source != nil && a.Source.Filter != nil {
			// echo the filter, as the service does
			reply.Source = a.Source
		}
	}
	if l.kind == linkOut {
		l.wakeCh = make(chan struct{}, 1)
		l.done = make(chan struct{})
	}
	switch l.kind {
	case linkIn, linkOut:
		ss.entityLinked.Store(true)
	case linkCoordinator:
		l.crossEntity = !ss.entityLinked.Load()
	}
	if l.sess != nil && !pending {
		l.sessionReply(reply, a, sessionUntil)
		l.sess.attached = true
	}
	ss.mu.Lock()
	ss.links[a.Handle] = l
	delete(ss.detached, a.Handle)
	ss.answeredLocked(a.Handle)
	ss.names[a.Name] = l
	ss.mu.Unlock()
	if pending {
		// the reply waits for a session (sessionlink.go)
		if !l.node.wait(l) {
			// Deleted since the lookup.
			ss.removeLink(l)
			l.refusePending(reply, errEntityGone(l.node.path()))
			return
		}
		c.wg.Add(1)
		go l.run(a, reply)
		return
	}
	// A receiver is its node's before the client hears of it, so that a
	// deletion of the node either finds it or came first (live false);
	// one that finds it waits for the answer (replying).
	live := true
	if l.kind == linkOut {
		l.mu.Lock()
		l.replying = true
		l.mu.Unlock()
		live = l.node.wait(l)
	}
	c.writeFrame(amqp.FrameAMQP, ss.ch, reply)
	if a.Role == amqp.RoleSender {
		// grant credit to every client sender, $cbs and $management too
		l.credit = linkCredit
		if a.InitialDeliveryCount != nil {
			l.inCount = *a.InitialDeliveryCount
		}
		dc, cr := l.inCount, uint32(linkCredit)
		ss.sendFlow(&amqp.Flow{Handle: &l.handle, DeliveryCount: &dc, LinkCredit: &cr})
		return
	}
	if l.kind == linkOut {
		l.mu.Lock()
		l.replying = false
		later := l.detachLater
		l.mu.Unlock()
		c.wg.Add(1)
		go l.run(nil, nil)
		if !live {
			// Deleted between the lookup and the reply.
			later = errEntityGone(l.node.path())
		}
		if later != nil {
			l.forceDetach(later)
		}
	}
}

// setUpReceiving checks a link the client sends on.
func (l *link) setUpReceiving(a *amqp.Attach) *amqp.Error {
	if a.Coordinator != nil {
		l.kind = linkCoordinator
		return nil
	}
	if a.Target == nil || a.Target.Address == "" {
		return &amqp.Error{Condition: condInvalidField, Description: "The link has no target address."}
	}
	l.addr = a.Target.Address
	if l.addr == addrCBS {
		l.kind = linkCBSIn
		return nil
	}
	ad, ok := parseAddress(l.addr)
	if !ok {
		return &amqp.Error{Condition: condNotFound, Description: fmt.Sprintf("The messaging entity '%s' could not be found.", l.addr)}
	}
	l.path = ad.path()
	if !l.ss.c.authorized(l.path) {
		return errUnauthorized("Send", l.ss.c, l.addr)
	}
	if ad.mgmt {
		l.kind = linkMgmtIn
		if ad.sub == "" && ad.queue == subMain && l.ss.c.srv().topic(ad.entity) != nil {
			return nil // a topic's $management (schedule-message)
		}
		if l.node = l.ss.c.srv().resolve(ad); l.node == nil {
			return errEntityGone(l.path)
		}
		return nil
	}
	l.kind = linkIn
	if ad.sub != "" || ad.queue != subMain {
		if l.ss.c.srv().resolve(ad) == nil {
			return errEntityGone(l.path)
		}
		return &amqp.Error{Condition: condNotAllowed, Description: fmt.Sprintf("Cannot send to '%s': messages can be sent to queues and topics only.", l.path)}
	}
	if l.ss.c.srv().queue(ad.entity) == nil && l.ss.c.srv().topic(ad.entity) == nil {
		return errEntityGone(l.path)
	}
	return l.setUpVia(a)
}

// propTransferDestination is the attach property of a send-via link: the
// entity its messages go to, through the link's target.
const propTransferDestination = "com.microsoft:transfer-destination-address"

// setUpVia reads the destination of a send-via link, if it is one: a queue
// or topic the client may send to.
func (l *link) setUpVia(a *amqp.Attach) *amqp.Error {
	v, ok := get[string](a.Properties, propTransferDestination)
	if !ok || v == "" {
		return nil
	}
	ad, ok := parseAddress(v)
	if !ok || ad.mgmt || ad.sub != "" || ad.queue != subMain {
		return &amqp.Error{Condition: condNotAllowed, Description: fmt.Sprintf("Cannot send to '%s': messages can be sent to queues and topics only.", v)}
	}
	if !l.ss.c.authorized(ad.path()) {
		return errUnauthorized("Send", l.ss.c, v)
	}
	if l.ss.c.srv().queue(ad.entity) == nil && l.ss.c.srv().topic(ad.entity) == nil {
		return errEntityGone(ad.path())
	}
	l.dest = ad.path()
	return nil
}

// setUpSending checks a link the client receives on.
func (l *link) setUpSending(a *amqp.Attach) *amqp.Error {
	if a.Source == nil || a.Source.Address == "" {
		return &amqp.Error{Condition: condInvalidField, Description: "The link has no source address."}
	}
	l.addr = a.Source.Address
	if a.Target != nil {
		l.target = a.Target.Address
	}
	if l.addr == addrCBS {
		l.kind = linkCBSOut
		return nil
	}
	ad, ok := parseAddress(l.addr)
	if !ok {
		return &amqp.Error{Condition: condNotFound, Description: fmt.Sprintf("The messaging entity '%s' could not be found.", l.addr)}
	}
	l.path = ad.path()
	if !l.ss.c.authorized(l.path) {
		return errUnauthorized("Listen", l.ss.c, l.addr)
	}
	if ad.mgmt {
		l.kind = linkMgmtOut
		return nil
	}
	l.kind = linkOut
	if l.node = l.ss.c.srv().resolve(ad); l.node == nil {
		if ad.sub == "" && ad.queue == subMain && l.ss.c.srv().topic(ad.entity) != nil {
			return &amqp.Error{Condition: condNotAllowed, Description: fmt.Sprintf("Cannot receive from the topic '%s': receive from one of its subscriptions.", ad.entity)}
		}
		return errEntityGone(l.path)
	}
	h, ok, ferr := readSessionFilter(a)
	if ok {
		if !l.node.requiresSession() {
			return l.ss.c.srv().errSessionReceiverOnPlainEntity(l.node)
		}
		if ferr != nil {
			return ferr
		}
		// one holder id per link, never reused: a link of the same name
		// that replaces this one holds the session under another
		h.holder = fmt.Sprintf("receiver %d (connection %d, link %s)", l.ss.c.srv().nholder.Add(1), l.ss.c.id, l.name)
		l.sess = h
		return nil
	}
	if l.node.requiresSession() {
		return l.ss.c.srv().errNonSessionReceiver(l.node)
	}
	return nil
}

func errUnauthorized(claim string, c *conn, addr string) *amqp.Error {
	return &amqp.Error{Condition: condUnauthorized,
		Description: fmt.Sprintf("Unauthorized access. '%s' claim(s) are required to perform this operation. Resource: 'sb://%s/%s'.", claim, c.hostname, addr)}
}

// receiveAndDelete reports whether the link's deliveries are settled when
// sent.
func (l *link) receiveAndDelete() bool { return l.sndSettle == amqp.SndSettled }

// flow takes the client's flow for the link.
func (l *link) flow(f *amqp.Flow) {
	switch l.kind {
	case linkIn, linkCBSIn, linkMgmtIn:
		if f.Echo {
			dc, cr := l.inCount, l.credit
			l.ss.sendFlow(&amqp.Flow{Handle: &l.handle, DeliveryCount: &dc, LinkCredit: &cr})
		}
		return
	}
	l.mu.Lock()
	if f.LinkCredit != nil {
		remoteDC := uint32(0)
		if f.DeliveryCount != nil {
			remoteDC = *f.DeliveryCount
		}
		l.outCredit = remoteDC + *f.LinkCredit - l.deliveryCount
		if l.outCredit > 1<<30 { // the client counted past us: treat as none
			l.outCredit = 0
		}
	}
	l.drain = f.Drain
	replies := l.takeRepliesLocked()
	l.mu.Unlock()
	for _, r := range replies {
		l.sendReply(r)
	}
	if l.kind == linkOut {
		l.wake()
	} else if f.Drain {
		l.finishDrain()
	}
	if f.Echo {
		l.sendOwnFlow(false)
	}
}

// sendOwnFlow tells the client the link's delivery count and credit.
func (l *link) sendOwnFlow(drain bool) {
	l.mu.Lock()
	dc, cr := l.deliveryCount, l.outCredit
	l.mu.Unlock()
	l.ss.writeFor(l, &amqp.Flow{Handle: &l.handle, DeliveryCount: &dc, LinkCredit: &cr, Drain: drain})
}

// finishDrain uses up the credit the client asked to drain (§2.6.7).
func (l *link) finishDrain() {
	l.mu.Lock()
	if !l.drain {
		l.mu.Unlock()
		return
	}
	l.deliveryCount += l.outCredit
	l.outCredit = 0
	l.drain = false
	l.mu.Unlock()
	l.sendOwnFlow(true)
}

// transfer takes one transfer frame of a receiving link.
func (l *link) transfer(t *amqp.Transfer, payload []byte) {
	if !l.partialSet {
		if t.DeliveryID == nil {
			l.ss.errorEnd(condInvalidField, "the first transfer of a delivery has no delivery-id")
			return
		}
		l.partialID, l.partialSet = *t.DeliveryID, true
		l.partialSettl = t.Settled != nil && *t.Settled
		l.partialFmt = 0
		l.partialState = t.State
		if t.MessageFormat != nil {
			l.partialFmt = *t.MessageFormat
		}
		l.partial = l.partial[:0]
		l.oversized = false
		if l.credit > 0 {
			l.credit--
		}
		l.inCount++
	} else if t.Settled != nil && *t.Settled {
		l.partialSettl = true
	}
	if t.Aborted {
		l.partialSet = false
		l.partial = l.partial[:0]
		return
	}
	limit := int(l.ss.c.srv().cfg.MaxMessageSize)
	if l.kind != linkIn {
		limit = ourMaxFrameSize * 16
	}
	if !l.oversized {
		if len(l.partial)+len(payload) > limit {
			l.oversized = true
			l.partial = l.partial[:0]
		} else {
			l.partial = append(l.partial, payload...)
		}
	}
	if l.credit < linkCredit/2 {
		l.credit = linkCredit
		dc, cr := l.inCount, l.credit
		l.ss.sendFlow(&amqp.Flow{Handle: &l.handle, DeliveryCount: &dc, LinkCredit: &cr})
	}
	if t.More {
		return
	}
	l.partialSet = false
	body := make([]byte, len(l.partial))
	copy(body, l.partial)
	if cap(l.partial) > 1<<20 {
		l.partial = nil
	}
	id, settled, format, state := l.partialID, l.partialSettl, l.partialFmt, l.partialState
	l.partialState = nil
	if l.oversized {
		l.ss.c.reply(l, id, settled, nil, errTooLarge(limit+1, int64(limit)))
		return
	}
	switch l.kind {
	case linkIn:
		l.ss.c.srv().receiveSend(l, id, settled, format, body, state)
	case linkCBSIn:
		l.ss.c.cbsRequest(l, id, settled, body)
	case linkMgmtIn:
		l.ss.c.mgmtRequest(l, id, settled, body, state)
	case linkCoordinator:
		l.ss.c.coordinate(l, id, settled, body)
	default:
		l.ss.errorEnd(condNotAllowed, "a transfer on a link the client receives on")
	}
}

// receiveSend enqueues what a client sent on a link: one message, or a
// batch (message-format 0x80013700, one data section per message). The
// client is told once every copy is committed (EM-3).
func (s *Server) receiveSend(l *link, id uint32, settled bool, format uint32, body []byte, state amqp.DeliveryState) {
	now := s.now()
	raws := [][]byte{body}
	if format == amqp.MessageFormatBatch {
		outer, err := amqp.UnmarshalMessage(body)
		if err != nil {
			l.ss.c.reply(l, id, settled, nil, core.Errorf(core.EINVALID, "The batch could not be decoded: %v", err))
			return
		}
		raws = outer.Data
	}
	// A batch is stored whole or not at all (issue 25.2): a client told
	// that it failed sends all of it again.
	ins := make([]*inMsg, len(raws))
	for i, raw := range raws {
		in, err := s.readMessage(raw)
		if err != nil {
			l.ss.c.reply(l, id, settled, nil, err)
			return
		}
		ins[i] = in
	}
	if ts, ok := state.(*amqp.TransactionalState); ok {
		s.sendInTxn(l, id, settled, ts, ins)
		return
	}
	_, c, err := s.send(now, l.sendPath(), ins...)
	l.ss.c.reply(l, id, settled, []*core.Commit{c}, err)
}

// sendPath is the entity a sending link's messages go to: the destination
// of a send-via link, else the link's entity.
func (l *link) sendPath() string {
	if l.dest != "" {
		return l.dest
	}
	return l.path
}

// wake makes a sending link look for messages.
func (l *link) wake() {
	if l.wakeCh == nil {
		return
	}
	select {
	case l.wakeCh <- struct{}{}:
	default:
	}
}

// run hands a receiver messages while it has credit. A session receiver
// whose attach waits for a next session (a and reply set) first waits for
// one; a session receiver gives its session back when it ends.
func (l *link) run(a, reply *amqp.Attach) {
	defer l.ss.c.wg.Done()
	defer l.node.unwait(l)
	defer l.releaseSession()
	if reply != nil && !l.awaitSession(a, reply) {
		return
	}
	for {
		select {
		case <-l.done:
			return
		case <-l.wakeCh:
		}
		if err := l.pump(); err != nil {
			if !errors.Is(err, errStopped) {
				l.forceDetach(amqpError(sessionError(err, "")))
			}
			return
		}
	}
}

// pump delivers messages until the credit or the messages run out.
func (l *link) pump() error {
	s := l.ss.c.srv()
	n := l.node
	// A receive on a subscription is a use of its topic (SB-10): one touch
	// per run of deliveries, not one per message, made before the first
	// delivery goes out, so that a client that got the message sees the
	// topic used (a clock advanced right after would otherwise find it
	// idle).
	delivered := false
	for {
		select {
		case <-l.done:
			return errStopped
		default:
		}
		l.mu.Lock()
		credit := l.outCredit
		l.mu.Unlock()
		group, holder, session := l.heldSession()
		if credit == 0 {
			if session {
				// woken without credit: the session's lock may be gone
				if _, err := s.e.GetSessionState(s.now(), n.key, group, holder); core.ErrorCode(err) == core.ESESSIONLOCKLOST {
					return err
				}
			}
			l.finishDrain()
			return nil
		}
		now := s.now()
		var it core.Item
		var found bool
		var err error
		switch {
		case session && l.receiveAndDelete():
			it, found, _, err = s.e.TakeSession(now, n.key, group, holder)
		case session:
			it, found, err = s.e.ReceiveSession(now, n.key, group, holder)
		case l.receiveAndDelete():
			// at most once, as receive-and-delete is: the removal is not
			// waited for
			it, found, _, err = s.e.Take(now, n.key)
		default:
			it, found, err = s.e.Receive(now, n.key, now.Add(n.lockDuration()))
		}
		if err != nil {
			return err
		}
		if !found {
			l.finishDrain()
			return nil
		}
		if max := n.maxDeliveryCount(); max > 0 && !l.receiveAndDelete() && it.DeliveryCount > uint32(max) {
			// delivered MaxDeliveryCount times already (a lock ran out)
			if session {
				s.e.Holder(n.key, group, holder).DeadLetter(now, it.Seq, maxDeliveryReason(max))
			} else {
				s.e.DeadLetter(now, n.key, it.Seq, maxDeliveryReason(max))
			}
			continue
		}
		if !delivered && n.sub != nil {
			s.e.Touch(now, n.sub.topic.key, core.UseChild)
		}
		delivered = true
		if err := l.deliver(&it); err != nil {
			switch {
			case l.receiveAndDelete():
			case session:
				s.e.Holder(n.key, group, holder).Unlock(s.now(), it.Seq)
			default:
				s.e.Unlock(s.now(), n.key, it.Seq)
			}
			return err
		}
	}
}

// deliver sends one message on the link.
func (l *link) deliver(it *core.Item) error {
	var d delivery
	var od *outDelivery
	var tag []byte
	if !l.receiveAndDelete() {
		d.locked = true
		d.lockToken = lockToken(l.node, it)
		tag = deliveryTag(d.lockToken)
		od = &outDelivery{l: l, token: d.lockToken}
	} else {
		l.mu.Lock()
		l.tagSeq++
		tag = fmt.Appendf(nil, "%d", l.tagSeq)
		l.mu.Unlock()
	}
	payload, err := encodeDelivery(nil, l.node, it, d)
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.outCredit > 0 {
		l.outCredit--
	}
	l.deliveryCount++
	l.mu.Unlock()
	return l.ss.sendDelivery(l, tag, l.receiveAndDelete(), payload, od)
}

func maxDeliveryReason(max int32) core.DeadLetterReason {
	return core.DeadLetterReason{Code: "MaxDeliveryCountExceeded",
		Description: fmt.Sprintf("Message could not be consumed after %d delivery attempts.", max)}
}

// settle applies the client's outcome for a locked delivery and returns
// the state to echo when the client waits for it (servicebus.md §2.5).
func (l *link) settle(od *outDelivery, state amqp.DeliveryState) amqp.DeliveryState {
	s := l.ss.c.srv()
	_, holder, _ := l.heldSession()
	switch st := state.(type) {
	case *amqp.TransactionalState:
		return l.settleInTxn(od, st)
	case *amqp.Accepted:
		if err := s.settleToken(od.token, holder, "completed", nil, "", "", false); err != nil {
			return &amqp.Rejected{Error: amqpError(err)}
		}
		return st
	case *amqp.Released:
		if err := s.releaseToken(od.token, holder); err != nil {
			return &amqp.Rejected{Error: amqpError(err)}
		}
		return st
	case *amqp.Modified:
		op := "abandoned"
		if st.UndeliverableHere {
			op = "defered"
		}
		if err := s.settleToken(od.token, holder, op, st.MessageAnnotations, "", "", false); err != nil {
			return &amqp.Rejected{Error: amqpError(err)}
		}
		return st
	case *amqp.Rejected:
		reason, desc, props := deadLetterInfo(st.Error)
		if err := s.settleToken(od.token, holder, "suspended", props, reason, desc, false); err != nil {
			return &amqp.Rejected{Error: amqpError(err)}
		}
		return &amqp.Rejected{}
	}
	return state
}

// deadLetterInfo reads the dead-letter reason, description and the
// properties to modify from the error of a rejected outcome.
func deadLetterInfo(e *amqp.Error) (reason, desc string, props amqp.Map) {
	if e == nil {
		return "", "", nil
	}
	for _, kv := range e.Info {
		k, _ := kv.Key.(string)
		if ks, ok := kv.Key.(amqp.Symbol); ok {
			k = string(ks)
		}
		switch k {
		case propDeadLetterReason:
			reason, _ = kv.Value.(string)
		case propDeadLetterDesc:
			desc, _ = kv.Value.(string)
		default:
			props = props.Set(k, kv.Value)
		}
	}
	return reason, desc, props
}

// sendReply sends a management or CBS response on the link, or keeps it
// until the client gives credit.
func (l *link) sendReply(msg []byte) {
	l.mu.Lock()
	if l.outCredit == 0 {
		l.replies = append(l.replies, msg)
		l.mu.Unlock()
		return
	}
	l.outCredit--
	l.deliveryCount++
	l.tagSeq++
	tag := fmt.Appendf(nil, "%d", l.tagSeq)
	l.mu.Unlock()
	l.ss.sendDelivery(l, tag, true, msg, nil)
}

func (l *link) takeRepliesLocked() [][]byte {
	if len(l.replies) == 0 || l.outCredit == 0 {
		return nil
	}
	n := min(int(l.outCredit), len(l.replies))
	out := l.replies[:n]
	l.replies = l.replies[n:]
	return out
}

// stop ends a link's goroutine.
func (l *link) stop() {
	l.stopOnce.Do(func() {
		if l.done != nil {
			close(l.done)
		}
		if l.kind == linkCoordinator {
			l.ss.c.dropTxns(l)
		}
	})
}

// forceDetach detaches a link from the server's side with an error,
// unless the client detached it already.
func (l *link) forceDetach(e *amqp.Error) {
	if l.refuseIfPending(e) {
		return
	}
	l.mu.Lock()
	if l.replying {
		if l.detachLater == nil {
			l.detachLater = e
		}
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.stop()
	l.releaseSession()
	if l.ss.removeLink(l) {
		l.ss.write(&amqp.Detach{Handle: l.handle, Closed: true, Error: e})
	}
}

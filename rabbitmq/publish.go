package rabbitmq

import (
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// basicPublishID is basic.publish's method id.
const basicPublishID = 40

// publishState is a basic.publish whose content is being read. A channel
// reuses one.
type publishState struct {
	m         wire.BasicPublish
	gotHeader bool
	size      uint64
	// meta is the message's Meta as it will be stored unless its headers
	// route it by more keys (CC, BCC): exchange, routing key, properties as
	// received from propsAt on.
	meta     []byte
	propsAt  int
	body     []byte
	tooLarge bool
	// left counts down the body octets still to come of a message over
	// maxMessageSize, which are read and dropped.
	left uint64
}

// startPublish reads basic.publish; its content follows.
func (ch *channel) startPublish(payload []byte) error {
	p := &ch.pubBuf
	*p = publishState{}
	if err := wire.ReadMethodInto(payload, &p.m); err != nil {
		return err
	}
	if p.m.Immediate {
		return &amqpError{code: wire.NotImplemented, conn: true, classID: wire.ClassBasic, methodID: basicPublishID,
			text: "NOT_IMPLEMENTED - immediate=true"}
	}
	ch.pub = p
	return nil
}

// contentHeader reads the content header of the publish under way.
func (ch *channel) contentHeader(payload []byte) error {
	p := ch.pub
	if p == nil || p.gotHeader {
		return connectionError(wire.UnexpectedFrame, "expected method frame, got non method frame instead")
	}
	h, err := wire.ReadContentHeader(payload)
	if err != nil {
		return err
	}
	if h.ClassID != wire.ClassBasic {
		return connectionError(wire.UnexpectedFrame, "expected content header for class 60, got one for class %d instead", h.ClassID)
	}
	p.gotHeader = true
	p.size = h.BodySize
	p.meta = appendMeta(make([]byte, 0, 5+len(p.m.Exchange)+len(p.m.RoutingKey)+len(h.Props)),
		p.m.Exchange, p.m.RoutingKey, nil, h.Props)
	p.propsAt = len(p.meta) - len(h.Props)
	if h.BodySize > maxMessageSize {
		p.tooLarge = true
		p.left = h.BodySize
	} else if h.BodySize > 0 {
		p.body = make([]byte, 0, min(h.BodySize, uint64(ch.c.frameMax)))
	}
	if h.BodySize == 0 {
		return ch.finishPublish()
	}
	return nil
}

// contentBody reads a body frame of the publish under way.
func (ch *channel) contentBody(payload []byte) error {
	p := ch.pub
	if p == nil || !p.gotHeader {
		return connectionError(wire.UnexpectedFrame, "expected method frame, got non method frame instead")
	}
	got := uint64(len(p.body)) + uint64(len(payload))
	if p.tooLarge {
		p.left -= min(p.left, uint64(len(payload))) // count down instead of keeping bytes
		if p.left == 0 {
			return ch.finishPublish()
		}
		return nil
	}
	if got > p.size {
		return connectionError(wire.FrameError, "content body of %d octets is over the announced %d", got, p.size)
	}
	p.body = append(p.body, payload...)
	if got == p.size {
		return ch.finishPublish()
	}
	return nil
}

// message is a complete published message.
type message struct {
	exchange   string
	routingKey string
	mandatory  bool
	props      wire.Properties
	rawProps   []byte
	meta       []byte // Meta without extra routing keys, ending with rawProps
	body       []byte
	ttl        core.TTL
}

// finishPublish checks a complete message and publishes it, or keeps it
// for tx.commit.
func (ch *channel) finishPublish() error {
	p := ch.pub
	ch.pub = nil
	fail := func(e *amqpError) error {
		e.classID, e.methodID = wire.ClassBasic, basicPublishID
		return e
	}
	if p.tooLarge {
		return fail(channelError(wire.PreconditionFailed, "message size %d is larger than configured max size %d",
			p.size, maxMessageSize))
	}
	raw := p.meta[p.propsAt:]
	props, err := wire.DecodeProperties(raw)
	if err != nil {
		return err
	}
	msg := message{exchange: p.m.Exchange, routingKey: p.m.RoutingKey, mandatory: p.m.Mandatory,
		props: props, rawProps: raw, meta: p.meta, body: p.body, ttl: core.NoTTL}
	m := &msg
	if props.Flags&wire.FlagExpiration != 0 {
		ttl, err := adapters.ParseRabbitExpiration(props.Expiration) // RB-5, RB-11
		if err != nil {
			return fail(channelError(wire.PreconditionFailed, "%s", core.ErrorMessage(err)))
		}
		m.ttl = ttl
	}
	if props.Flags&wire.FlagUserID != 0 && props.UserID != ch.c.user.Name {
		return fail(channelError(wire.PreconditionFailed, "user_id property set to '%s' but authenticated user was '%s'",
			props.UserID, ch.c.user.Name))
	}
	if err := ch.c.permitted(write, "exchange", m.exchange); err != nil {
		return fail(fromCore(err))
	}
	if ch.tx != nil {
		if err := ch.c.s.checkPublish(ch.c.vhost, m.exchange); err != nil {
			return fail(err)
		}
		cp := msg
		ch.tx.publishes = append(ch.tx.publishes, &cp)
		return nil
	}
	var seq uint64
	if ch.confirm != nil {
		ch.publishes++
		seq = ch.publishes
	}
	res, err := ch.c.s.publish(ch.c.vhost, m)
	if err != nil {
		return fail(fromCore(err))
	}
	if res.routed == 0 && m.mandatory {
		ch.basicReturn(m, wire.NoRoute, "NO_ROUTE")
	}
	if ch.confirm != nil && (ch.c.r.Buffered() > 0 || !ch.confirm.now(seq, res.commit, res.rejected)) {
		ch.confirm.add(seq, res.commit, res.rejected)
	}
	return nil
}

// basicReturn sends an unroutable mandatory message back.
func (ch *channel) basicReturn(m *message, code uint16, text string) {
	ret := &wire.BasicReturn{ReplyCode: code, ReplyText: text, Exchange: m.exchange, RoutingKey: m.routingKey}
	ch.c.w.write(func(b []byte) []byte {
		b = wire.AppendMethodFrame(b, ch.id, ret)
		return wire.AppendContent(b, ch.id, wire.ClassBasic, m.rawProps, m.body, ch.c.frameMax)
	})
}

// publishResult is what became of a published message.
type publishResult struct {
	routed int
	// commit is the Commit of its last write: when it is done, so are the
	// earlier ones (core.Store).
	commit   *core.Commit
	rejected bool // a queue refused it (x-overflow reject-publish)
}

// checkPublish checks that exchange exists and takes publishes.
func (s *Server) checkPublish(vh, name string) *amqpError {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, err := publishExchange(s.vhosts[vh], vh, name)
	return err
}

// publishExchange is the exchange a publish to name goes to: nil for the
// default exchange; 404 when there is none, 403 for an internal one.
// Callers hold Server.mu.
func publishExchange(v *vhost, vh, name string) (*exchange, *amqpError) {
	if name == "" {
		return nil, nil
	}
	var x *exchange
	if v != nil {
		x = v.exchanges[name]
	}
	switch {
	case x == nil:
		return nil, notFoundExchange(vh, name)
	case x.internal:
		return nil, channelError(wire.AccessRefused, "cannot publish to internal %s", rs("exchange", name, vh))
	}
	return x, nil
}

// publish routes a message and enqueues a copy in each queue it reaches
// (RB-2).
func (s *Server) publish(vh string, m *message) (publishResult, error) {
	var res publishResult
	var r routing
	r.one[0] = m.routingKey
	r.keys = r.one[:]
	r.queues = r.qbuf[:0]
	meta := m.meta
	if h := m.props.Headers; h != nil {
		cc, bcc := headerRoutes(h, "CC"), headerRoutes(h, "BCC")
		if len(cc)+len(bcc) > 0 {
			r.keys = append(append(append([]string(nil), m.routingKey), cc...), bcc...)
		}
		raw := m.rawProps
		if _, ok := h["BCC"]; ok {
			delete(h, "BCC")
			raw = m.props.Append(nil)
		}
		if len(r.keys) > 1 || len(raw) != len(m.rawProps) {
			meta = appendMeta(nil, m.exchange, m.routingKey, r.keys[1:], raw)
		}
	}
	s.mu.RLock()
	v := s.vhosts[vh]
	x, xerr := publishExchange(v, vh, m.exchange)
	if xerr != nil {
		s.mu.RUnlock()
		return res, xerr
	}
	r.headers = m.props.Headers
	if r.headers != nil {
		r.delay = delayOf(r.headers)
	}
	r.route(v, x)
	s.mu.RUnlock()
	// A held message is not routed (RB-15): a mandatory one is returned,
	// as the plugin does.
	res.routed = len(r.queues)
	now := s.now()
	for _, dx := range r.held {
		c, err := s.hold(now, vh, dx, m.body, meta, r.delay)
		switch {
		case err == nil:
			res.commit = c
		case core.ErrorCode(err) != core.ENOTFOUND: // not an exchange deleted since
			res.rejected = true
		}
	}
	if len(r.queues) == 0 {
		return res, nil
	}
	it := core.Item{
		Body:       m.body,
		Meta:       meta,
		TTL:        m.ttl,
		Persistent: m.props.DeliveryMode == 2,
	}
	for _, q := range r.queues {
		c, rejected := q.publish(now, it)
		if c != nil {
			res.commit = c
		}
		res.rejected = res.rejected || rejected
	}
	return res, nil
}

// publish enqueues a message in the queue, handing it straight to a
// consumer that can take it at once (RB-4). The queue's length limit
// (x-max-length, x-max-length-bytes, x-overflow) is its entity's policy,
// kept by the engine within the same call (RB-9): drop-head dead-letters
// the head with reason maxlen, reject-publish refuses the message (EFULL).
// rejected reports a message the queue did not store, which its publisher
// is nacked for: refused, or failed; a queue deleted since the routing
// counts as not routed there, as it does in RabbitMQ.
func (q *queue) publish(now time.Time, it core.Item) (commit *core.Commit, rejected bool) {
	var err error
	it.Group = q.priorityGroup(it.Meta)
	if q.nconsumers.Load() > 0 {
		var taken, handed bool
		commit, taken, handed, err = q.handOver(now, it)
		if handed || taken && err == nil {
			return commit, false
		}
	}
	if err == nil {
		_, commit, err = q.s.e.Enqueue(now, q.key, it)
	}
	if err != nil {
		return nil, core.ErrorCode(err) != core.ENOTFOUND
	}
	return commit, false
}

// handOver gives a message straight to a consumer with room when no
// message waits ahead of it in the queue: stored locked for a consumer that
// acks, not stored at all for one that does not. It is how a message with a
// TTL of 0 reaches a consumer that can take it at once (RB-4), and it
// spares every other message a trip through the dispatcher. taken reports
// that the engine has the message, handed that it went to a consumer;
// commit is the Commit of its write; err is the engine's refusal. In a
// priority queue no message of any priority may wait (RB-14).
func (q *queue) handOver(now time.Time, it core.Item) (commit *core.Commit, taken, handed bool, err error) {
	q.dmu.Lock()
	defer q.dmu.Unlock()
	c, prev := q.pick()
	if c == nil {
		return nil, false, false, nil
	}
	h := core.HandLocked
	if c.noAck {
		h = core.HandTaken
	}
	out, handed, commit, err := q.s.e.EnqueueHanded(now, q.key, it, h)
	if err != nil {
		q.unpick(c, prev)
		return nil, false, false, err
	}
	if !handed {
		q.unpick(c, prev)
		q.signal()
		return commit, true, false, nil
	}
	c.ch.deliver(c, q, out)
	return commit, true, true, nil
}

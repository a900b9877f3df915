package rabbitmq

import (
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// basicPublishID is basic.publish's method id.
const basicPublishID = 40

// publishState is a basic.publish whose content is being read.
type publishState struct {
	m         wire.BasicPublish
	gotHeader bool
	size      uint64
	props     []byte
	body      []byte
	tooLarge  bool
}

// startPublish reads basic.publish; its content follows.
func (ch *channel) startPublish(payload []byte) error {
	p := &publishState{}
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
	p.props = append([]byte(nil), h.Props...)
	if h.BodySize > maxMessageSize {
		p.tooLarge = true
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
		got = p.size - min(p.size, uint64(len(payload))) // count down instead of keeping bytes
		p.size = got
		if got == 0 {
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
	props, err := wire.DecodeProperties(p.props)
	if err != nil {
		return err
	}
	m := &message{exchange: p.m.Exchange, routingKey: p.m.RoutingKey, mandatory: p.m.Mandatory,
		props: props, rawProps: p.props, body: p.body, ttl: core.NoTTL}
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
		return fail(err.(*amqpError))
	}
	if ch.tx != nil {
		if err := ch.c.s.checkPublish(ch.c.vhost, m.exchange); err != nil {
			return fail(err)
		}
		ch.tx.publishes = append(ch.tx.publishes, m)
		return nil
	}
	var seq uint64
	if ch.confirm != nil {
		ch.publishes++
		seq = ch.publishes
	}
	res, err := ch.c.s.publish(ch.c.vhost, m)
	if err != nil {
		return fail(err.(*amqpError))
	}
	if res.routed == 0 && m.mandatory {
		ch.basicReturn(m, wire.NoRoute, "NO_ROUTE")
	}
	if ch.confirm != nil {
		ch.confirm.add(seq, res.commits, res.rejected)
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
	routed   int
	commits  []*core.Commit
	rejected bool // a queue refused it (x-overflow reject-publish)
}

// checkPublish checks that exchange exists and takes publishes.
func (s *Server) checkPublish(vh, name string) *amqpError {
	if name == "" {
		return nil
	}
	x := s.lookupExchange(vh, name)
	switch {
	case x == nil:
		return notFoundExchange(vh, name)
	case x.internal:
		return channelError(wire.AccessRefused, "cannot publish to internal %s", rs("exchange", name, vh))
	}
	return nil
}

// publish routes a message and enqueues a copy in each queue it reaches
// (RB-2).
func (s *Server) publish(vh string, m *message) (publishResult, error) {
	var res publishResult
	keys := []string{m.routingKey}
	raw := m.rawProps
	if h := m.props.Headers; h != nil {
		cc, bcc := headerRoutes(h, "CC"), headerRoutes(h, "BCC")
		keys = append(append(keys, cc...), bcc...)
		if _, ok := h["BCC"]; ok {
			delete(h, "BCC")
			raw = m.props.Append(nil)
		}
	}
	s.mu.RLock()
	v := s.vhosts[vh]
	var x *exchange
	if m.exchange != "" {
		x = v.exchanges[m.exchange]
		switch {
		case x == nil:
			s.mu.RUnlock()
			return res, notFoundExchange(vh, m.exchange)
		case x.internal:
			s.mu.RUnlock()
			return res, channelError(wire.AccessRefused, "cannot publish to internal %s", rs("exchange", m.exchange, vh))
		}
	}
	r := routing{keys: keys, headers: m.props.Headers}
	r.route(v, x)
	s.mu.RUnlock()
	res.routed = len(r.queues)
	if len(r.queues) == 0 {
		return res, nil
	}
	it := core.Item{
		Body:       m.body,
		Meta:       appendMeta(make([]byte, 0, 8+len(m.exchange)+len(m.routingKey)+len(raw)), m.exchange, m.routingKey, keys[1:], raw),
		TTL:        m.ttl,
		Persistent: m.props.DeliveryMode == 2,
	}
	now := s.now()
	for _, q := range r.queues {
		commits, rejected := q.publish(now, it)
		res.commits = append(res.commits, commits...)
		res.rejected = res.rejected || rejected
	}
	return res, nil
}

// publish enqueues a message in the queue, under its length limit
// (x-max-length, x-max-length-bytes: drop-head dead-letters the head with
// reason maxlen, reject-publish refuses the message), handing a message
// with a TTL of 0 to a consumer that can take it at once (RB-4).
func (q *queue) publish(now time.Time, it core.Item) ([]*core.Commit, bool) {
	e := q.s.e
	st := q.getSettings()
	limited := st.MaxLength != nil || st.MaxLengthBytes != nil
	maxLen, maxBytes := -1, int64(-1)
	if st.MaxLength != nil {
		maxLen = int(*st.MaxLength)
	}
	if st.MaxLengthBytes != nil {
		maxBytes = *st.MaxLengthBytes
	}
	if limited && st.Overflow != "drop-head" {
		cnt, _, err := e.Counts(now, q.key)
		if err != nil {
			return nil, false
		}
		if maxLen >= 0 && cnt.Active+1 > maxLen || maxBytes >= 0 && cnt.ActiveBytes+int64(len(it.Body)) > maxBytes {
			return nil, true
		}
	}
	if ttlZero(it.TTL) || ttlZero(st.MessageTTL) {
		if c := q.directConsumer(now); c != nil {
			return q.handOver(now, c, it), false
		}
	}
	_, commit, err := e.Enqueue(now, q.key, it)
	if err != nil {
		return nil, false
	}
	commits := []*core.Commit{commit}
	if limited && st.Overflow == "drop-head" {
		_, c2, _ := e.DropHead(now, q.key, maxLen, maxBytes, core.DeadLetterReason{Code: "maxlen",
			Description: "the queue is over its length limit", Rule: "RB-9"})
		commits = append(commits, c2)
	}
	return commits, false
}

func ttlZero(t core.TTL) bool { return t.Finite() && t.Duration() == 0 }

// directConsumer returns a consumer with room reserved that can take a
// message at once: the queue has no ready message ahead of it (RB-4).
func (q *queue) directConsumer(now time.Time) *consumer {
	cnt, _, err := q.s.e.Counts(now, q.key)
	if err != nil || cnt.Active > 0 {
		return nil
	}
	return q.pick()
}

// handOver gives a message straight to consumer c: enqueued locked for a
// consumer that acks, not stored at all for one that does not.
func (q *queue) handOver(now time.Time, c *consumer, it core.Item) []*core.Commit {
	if c.noAck {
		it.DeliveryCount = 1
		c.ch.deliver(c, q, it)
		return nil
	}
	it.State = core.Locked
	out, commit, err := q.s.e.Enqueue(now, q.key, it)
	if err != nil {
		c.unreserve()
		return nil
	}
	c.ch.deliver(c, q, out)
	return []*core.Commit{commit}
}

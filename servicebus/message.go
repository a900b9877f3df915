package servicebus

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/amqp"
)

// Message annotations and properties Service Bus reads and writes.
const (
	annSequenceNumber        = "x-opt-sequence-number"
	annEnqueuedTime          = "x-opt-enqueued-time"
	annLockedUntil           = "x-opt-locked-until"
	annScheduledEnqueueTime  = "x-opt-scheduled-enqueue-time"
	annEnqueueSequenceNumber = "x-opt-enqueue-sequence-number"
	annDeadLetterSource      = "x-opt-deadletter-source"
	annPartitionKey          = "x-opt-partition-key"
	annMessageState          = "x-opt-message-state"
	annLockToken             = "x-opt-lock-token"
	propDeadLetterReason     = "DeadLetterReason"
	propDeadLetterDesc       = "DeadLetterErrorDescription"
)

// Message states as x-opt-message-state carries them.
const (
	stateActive    int32 = 0
	stateDeferred  int32 = 1
	stateScheduled int32 = 2
)

// itemMeta is what the server keeps with a stored message besides the
// message the client sent: why it was dead-lettered, and the application
// properties a settlement changed (properties-to-modify).
type itemMeta struct {
	DeadLetterReason      string `json:"dlr,omitempty"`
	DeadLetterDescription string `json:"dld,omitempty"`
	DeadLetterSource      string `json:"dls,omitempty"`
	// Modified is an AMQP map of application properties to set.
	Modified []byte `json:"mod,omitempty"`
	// EnqueuedSeq is the sequence number the message had in the entity it
	// was first enqueued to.
	EnqueuedSeq uint64 `json:"eseq,omitempty"`
}

func readItemMeta(b []byte) itemMeta {
	var m itemMeta
	if len(b) > 0 {
		json.Unmarshal(b, &m)
	}
	return m
}

func (m *itemMeta) marshal() []byte {
	if m.DeadLetterReason == "" && m.DeadLetterDescription == "" && m.DeadLetterSource == "" && len(m.Modified) == 0 && m.EnqueuedSeq == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// modify merges properties-to-modify into the meta.
func (m *itemMeta) modify(props amqp.Map) error {
	if len(props) == 0 {
		return nil
	}
	var cur amqp.Map
	if len(m.Modified) > 0 {
		v, _, err := amqp.ReadValue(m.Modified)
		if err == nil {
			cur, _ = v.(amqp.Map)
		}
	}
	for _, kv := range props {
		cur = cur.Set(kv.Key, kv.Value)
	}
	b, err := amqp.AppendValue(nil, cur)
	if err != nil {
		return core.Errorf(core.EINVALID, "properties-to-modify: %v", err)
	}
	m.Modified = b
	return nil
}

// inMsg is a message a client sent, read once for routing.
type inMsg struct {
	raw       []byte
	m         *amqp.Message
	ttl       core.TTL
	scheduled time.Time
}

// readMessage reads one message a client sent.
func (s *Server) readMessage(raw []byte) (*inMsg, error) {
	if int64(len(raw)) > s.cfg.MaxMessageSize {
		return nil, errTooLarge(len(raw), s.cfg.MaxMessageSize)
	}
	m, err := amqp.UnmarshalMessage(raw)
	if err != nil {
		return nil, core.Errorf(core.EINVALID, "The message could not be decoded: %v", err)
	}
	if m.Properties == nil || m.Properties.MessageID == nil {
		if raw, err = withMessageID(raw, m, newMessageID()); err != nil {
			return nil, core.Errorf(core.EINVALID, "The message could not be decoded: %v", err)
		}
	}
	in := &inMsg{raw: raw, m: m}
	if m.Header != nil && m.Header.TTL != nil {
		in.ttl = core.After(time.Duration(*m.Header.TTL) * time.Millisecond)
	} else if m.Properties != nil && !m.Properties.AbsoluteExpiryTime.IsZero() && !m.Properties.CreationTime.IsZero() {
		in.ttl = core.After(m.Properties.AbsoluteExpiryTime.Sub(m.Properties.CreationTime))
	}
	if v, ok := m.MessageAnnotations.Get(annScheduledEnqueueTime); ok {
		if t, ok := v.(time.Time); ok {
			in.scheduled = t
		}
	}
	return in, nil
}

// newMessageID makes the message-id the service gives a message that came
// without one: a GUID as 32 lower-case hex digits, the form of .NET's
// Guid.ToString("N"), which is how service-assigned ids look to clients.
func newMessageID() string {
	u := uuid.New()
	return hex.EncodeToString(u[:])
}

// withMessageID returns the encoded message raw, decoded as m, with its
// properties' message-id set to id: the properties section is written
// anew, or added after the annotations, and every other section is kept
// as it came. m is changed to match.
func withMessageID(raw []byte, m *amqp.Message, id string) ([]byte, error) {
	secs, err := amqp.SplitSections(raw)
	if err != nil {
		return nil, err
	}
	if m.Properties == nil {
		m.Properties = &amqp.Properties{}
	}
	m.Properties.MessageID = id
	out := make([]byte, 0, len(raw)+64)
	wrote := false
	for _, sec := range secs {
		if !wrote && sec.Code >= 0x73 {
			if out, err = m.Properties.AppendTo(out); err != nil {
				return nil, err
			}
			wrote = true
		}
		if sec.Code != 0x73 {
			out = append(out, sec.Raw...)
		}
	}
	if !wrote {
		if out, err = m.Properties.AppendTo(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sessionID is the message's session id (AMQP group-id).
func (in *inMsg) sessionID() string {
	if in.m.Properties == nil {
		return ""
	}
	return in.m.Properties.GroupID
}

// duplicateOf reports whether the message's id was taken by d within
// window (duplicate detection), or by an earlier message of the send p
// plans; a message without an id never is. One that is not is recorded
// in p, for d to record once it is stored.
func (in *inMsg) duplicateOf(d *dedup, now time.Time, window time.Duration, p *plan) bool {
	if in.m.Properties == nil || in.m.Properties.MessageID == nil {
		return false
	}
	id, _ := idString(in.m.Properties.MessageID)
	s, ok := id.(string)
	if !ok {
		s = fmt.Sprint(id)
	}
	for _, x := range p.ids {
		if x.d == d && x.id == s {
			return true
		}
	}
	if d.claim(s, now, window) {
		return true
	}
	p.ids = append(p.ids, pendingID{d: d, id: s, window: window})
	return false
}

// item makes the core item of a message for an entity; in an entity that
// requires sessions (sessions) the item's Group is its session id.
func (in *inMsg) item(now time.Time, ttl core.TTL, sessions bool) core.Item {
	it := core.Item{Body: in.raw, TTL: ttl, Persistent: true}
	if sessions {
		it.Group = in.sessionID()
	}
	if !in.scheduled.IsZero() && in.scheduled.After(now) {
		it.State = core.Scheduled
		it.ScheduledAt = in.scheduled
	}
	return it
}

// delivery says how a stored message is being handed out.
type delivery struct {
	lockToken amqp.UUID
	locked    bool
	peek      bool // browsed: no lock, header as stored (SB-11)
}

// encodeDelivery writes the message of item it of node n as a client gets
// it: the sections the client sent with Service Bus's header, delivery
// and message annotations, and the application properties the server
// added (dead-letter reason, properties-to-modify).
func encodeDelivery(dst []byte, n *node, it *core.Item, d delivery) ([]byte, error) {
	secs, err := amqp.SplitSections(it.Body)
	if err != nil {
		return nil, err
	}
	meta := readItemMeta(it.Meta)
	var hdr amqp.Header
	var ann amqp.Map
	var appProps amqp.Map
	appAt := -1
	for i, sec := range secs {
		switch sec.Code {
		case 0x70:
			if m, err := amqp.UnmarshalMessage(sec.Raw); err == nil && m.Header != nil {
				hdr = *m.Header
			}
		case 0x72:
			if m, err := amqp.UnmarshalMessage(sec.Raw); err == nil {
				ann = m.MessageAnnotations
			}
		case 0x74:
			appAt = i
			if m, err := amqp.UnmarshalMessage(sec.Raw); err == nil {
				appProps = m.ApplicationProperties
			}
		}
	}
	// header: delivery-count counts earlier deliveries; the TTL is the
	// effective one on receive, the message's own on peek (SB-11).
	hdr.DeliveryCount = it.DeliveryCount
	if (!d.peek || it.State == core.Locked) && hdr.DeliveryCount > 0 {
		// the delivery under way counts once its lock is lost or the
		// message abandoned, not before, also on peek
		hdr.DeliveryCount--
	}
	hdr.TTL = nil
	ttl := it.EffectiveTTL
	if d.peek && !it.TTL.IsSet() {
		ttl = core.NoTTL
	}
	if ttl.Finite() && ttl.Duration() >= 0 {
		// A TTL beyond the header's uint32 of milliseconds (49.7 days) is
		// sent as the largest one, as the service sends it: the SDKs then
		// show 49.17:02:47.295 (azure-service-bus issue 678, azure-sdk-
		// for-net issue 38875). Without a header TTL, azservicebus would
		// read 0 and put ExpiresAt at the enqueued time.
		ms := uint32(min(ttl.Duration()/time.Millisecond, math.MaxUint32))
		hdr.TTL = &ms
	}
	// delivery-count is written even at 0, as the service does:
	// @azure/service-bus passes the field through as deliveryCount.
	if dst, err = hdr.AppendCounted(dst); err != nil {
		return nil, err
	}
	if d.locked {
		if dst, err = amqp.AppendSection(dst, 0x71, amqp.Map{{Key: amqp.Symbol(annLockToken), Value: d.lockToken}}); err != nil {
			return nil, err
		}
	}
	ann = ann.Set(amqp.Symbol(annSequenceNumber), int64(it.Seq))
	ann = ann.Set(amqp.Symbol(annEnqueuedTime), it.EnqueuedAt.UTC())
	if meta.EnqueuedSeq != 0 {
		ann = ann.Set(amqp.Symbol(annEnqueueSequenceNumber), int64(meta.EnqueuedSeq))
	}
	if d.locked && !it.LockedUntil.IsZero() {
		ann = ann.Set(amqp.Symbol(annLockedUntil), it.LockedUntil.UTC())
	}
	if meta.DeadLetterSource != "" {
		ann = ann.Set(amqp.Symbol(annDeadLetterSource), meta.DeadLetterSource)
	}
	switch it.State {
	case core.Deferred:
		ann = ann.Set(amqp.Symbol(annMessageState), stateDeferred)
	case core.Scheduled:
		ann = ann.Set(amqp.Symbol(annMessageState), stateScheduled)
		ann = ann.Set(amqp.Symbol(annScheduledEnqueueTime), it.ScheduledAt.UTC())
	default:
		switch {
		case !it.ScheduledAt.IsZero():
			// A message sent scheduled is shown so for good, once it is
			// enqueued too, received or peeked, as the service shows it
			// (the SDKs' own tests read its state).
			ann = ann.Set(amqp.Symbol(annMessageState), stateScheduled)
		case it.State == core.Locked && d.peek:
			ann = ann.Set(amqp.Symbol(annMessageState), stateActive)
		}
	}
	if dst, err = amqp.AppendSection(dst, 0x72, ann); err != nil {
		return nil, err
	}
	rewrite := meta.DeadLetterReason != "" || meta.DeadLetterDescription != "" || len(meta.Modified) > 0
	if rewrite {
		if len(meta.Modified) > 0 {
			if v, _, err := amqp.ReadValue(meta.Modified); err == nil {
				if mod, ok := v.(amqp.Map); ok {
					for _, kv := range mod {
						appProps = appProps.Set(kv.Key, kv.Value)
					}
				}
			}
		}
		if meta.DeadLetterReason != "" {
			appProps = appProps.Set(propDeadLetterReason, meta.DeadLetterReason)
		}
		if meta.DeadLetterDescription != "" {
			appProps = appProps.Set(propDeadLetterDesc, meta.DeadLetterDescription)
		}
	}
	wroteApp := false
	for _, sec := range secs {
		switch sec.Code {
		case 0x70, 0x71, 0x72:
			continue
		case 0x74:
			if rewrite {
				if dst, err = amqp.AppendSection(dst, 0x74, appProps); err != nil {
					return nil, err
				}
				wroteApp = true
				continue
			}
		case 0x75, 0x76, 0x77, 0x78:
			// application-properties go before the body
			if rewrite && !wroteApp && appAt < 0 {
				if dst, err = amqp.AppendSection(dst, 0x74, appProps); err != nil {
					return nil, err
				}
				wroteApp = true
			}
		}
		dst = append(dst, sec.Raw...)
	}
	if rewrite && !wroteApp {
		if dst, err = amqp.AppendSection(dst, 0x74, appProps); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// lockToken makes the lock token of a delivery from the node, the item
// and its delivery count, so that a token names its lock without a table:
// node id (4 bytes), sequence number (8) and delivery count (4).
func lockToken(n *node, it *core.Item) amqp.UUID {
	var u amqp.UUID
	u[0], u[1], u[2], u[3] = byte(n.id>>24), byte(n.id>>16), byte(n.id>>8), byte(n.id)
	for i := 0; i < 8; i++ {
		u[4+i] = byte(it.Seq >> (56 - 8*i))
	}
	dc := it.DeliveryCount
	u[12], u[13], u[14], u[15] = byte(dc>>24), byte(dc>>16), byte(dc>>8), byte(dc)
	return u
}

// parseLockToken reads a lock token back.
func parseLockToken(u amqp.UUID) (node uint32, seq uint64, count uint32) {
	node = uint32(u[0])<<24 | uint32(u[1])<<16 | uint32(u[2])<<8 | uint32(u[3])
	for i := 0; i < 8; i++ {
		seq = seq<<8 | uint64(u[4+i])
	}
	count = uint32(u[12])<<24 | uint32(u[13])<<16 | uint32(u[14])<<8 | uint32(u[15])
	return
}

// deliveryTag is a lock token in .NET's GUID byte order, as the delivery
// tag carries it.
func deliveryTag(u amqp.UUID) []byte {
	t := make([]byte, 16)
	copy(t, u[:])
	t[0], t[1], t[2], t[3] = u[3], u[2], u[1], u[0]
	t[4], t[5] = u[5], u[4]
	t[6], t[7] = u[7], u[6]
	return t
}

func errTooLarge(n int, max int64) error {
	return core.Errorf(core.ETOOLARGE, "The received message (delivery-id:0, size:%d bytes) exceeds the limit (%d bytes) currently allowed on the link.", n, max)
}

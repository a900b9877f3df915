package servicebus

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// cbsRequest serves a put-token on $cbs (servicebus.md §2.2): the token is
// checked against the configured keys and, when valid, authorizes the
// connection for its audience until it expires.
func (c *conn) cbsRequest(l *link, id uint32, settled bool, body []byte) {
	r := c.acceptRequest(l, id, settled, body)
	if r == nil {
		return
	}
	m := r.msg
	op, _ := stringProp(m.ApplicationProperties, "operation")
	audience, _ := stringProp(m.ApplicationProperties, "name")
	status, desc := int32(200), "Accepted"
	token, _ := m.Value.(string)
	switch {
	case op != "put-token":
		status, desc = 400, "The operation '"+op+"' is not supported on $cbs."
	case token == "":
		status, desc = 400, "The put-token request has no token."
	default:
		// A connection's first valid token binds it to the world of its
		// key; until then, a token of another world's key is checked
		// with that world's keys, and moves the connection there when
		// valid (world.go). Once bound, only keys of its world sign.
		s, skn := c.srv(), tokenField(token, "skn")
		var to *Server
		if !c.bound {
			to = s.world(skn)
		}
		if to != nil {
			s = to
		}
		// Tokens expire on the wall clock that signed them, not on the
		// emulated clock a test may have moved by days.
		err := sas.Verify(token, s.cfg.Keys, audience, time.Now())
		if err == nil && to != nil && !c.moveTo(to, skn) {
			// that world was deleted meanwhile: its key is no more
			err = sas.Verify(token, c.srv().cfg.Keys, audience, time.Now())
		}
		if err != nil {
			status, desc = 401, "InvalidSignature: "+err.Error()
		} else {
			c.bound = true
			c.addClaim(audience, tokenExpiry(token))
		}
	}
	c.log.Debug("put-token", "audience", audience, "status", status)
	resp := &amqp.Message{
		Properties: &amqp.Properties{CorrelationID: messageID(m)},
		ApplicationProperties: amqp.Map{
			{Key: "status-code", Value: status},
			{Key: "status-description", Value: desc},
		},
	}
	c.sendResponse(r, resp)
}

// request is a $cbs or $management request the server has settled. Only
// acceptRequest makes one and sendResponse needs one, so a reply is never
// queued before the disposition of its request.
type request struct {
	l   *link
	msg *amqp.Message
}

// acceptRequest reads a request that came on l as delivery id and, unless
// the client sent it settled, settles it at once: the disposition is
// queued here, on the connection's reading goroutine, before the request
// is served, so it goes out before the reply. uamqp (the transport of
// azure-servicebus up to 7.8 and azure-eventhub up to 5.10) fails a reply
// to a request it has not seen settled. A request that does not decode is
// rejected and gets no reply: acceptRequest returns nil.
func (c *conn) acceptRequest(l *link, id uint32, settled bool, body []byte) *request {
	m, err := amqp.UnmarshalMessage(body)
	var state amqp.DeliveryState = &amqp.Accepted{}
	if err != nil {
		c.log.Debug("an undecodable request", "address", l.addr, "err", err)
		state = &amqp.Rejected{Error: &amqp.Error{Condition: condDecode, Description: "The request could not be decoded: " + err.Error()}}
	}
	if !settled {
		c.writeFrame(amqp.FrameAMQP, l.ss.ch, &amqp.Disposition{Role: amqp.RoleReceiver, First: id, Settled: true, State: state})
	}
	if err != nil {
		return nil
	}
	return &request{l: l, msg: m}
}

// sendResponse sends the response to a request on the session's link for
// responses.
func (c *conn) sendResponse(r *request, resp *amqp.Message) {
	l, req := r.l, r.msg
	replyTo := ""
	if req.Properties != nil {
		replyTo = req.Properties.ReplyTo
		if resp.Properties.To == "" {
			resp.Properties.To = replyTo
		}
	}
	out := l.ss.replyLink(l, replyTo)
	if out == nil {
		c.log.Debug("no link to send a response on", "address", l.addr, "replyTo", replyTo)
		return
	}
	b, err := resp.MarshalBinary()
	if err != nil {
		c.log.Error("encoding a response", "err", err)
		return
	}
	out.sendReply(b)
}

// messageID is the request's message-id, which the response carries as its
// correlation-id.
func messageID(m *amqp.Message) any {
	if m.Properties == nil {
		return nil
	}
	return m.Properties.MessageID
}

// stringProp reads a string application property or map entry.
func stringProp(m amqp.Map, k string) (string, bool) {
	v, ok := m.Get(k)
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case amqp.Symbol:
		return string(x), true
	}
	return "", false
}

// tokenExpiry reads a SAS token's se= field; without one, a token counts
// for 15 minutes, as the SDKs assume.
func tokenExpiry(token string) time.Time {
	v := tokenField(token, "se")
	if u, err := url.QueryUnescape(v); err == nil {
		v = u
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0)
	}
	return time.Now().Add(15 * time.Minute)
}

// tokenField reads field name (se, skn, ...) of a SAS token as it is
// written, "" when the token has none.
func tokenField(token, name string) string {
	t := strings.TrimPrefix(token, "SharedAccessSignature ")
	for part := range strings.SplitSeq(t, "&") {
		if k, v, ok := strings.Cut(part, "="); ok && k == name {
			return v
		}
	}
	return ""
}

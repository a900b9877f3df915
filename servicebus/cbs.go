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
	c.reply(l.ss, id, settled, nil, nil)
	m, err := amqp.UnmarshalMessage(body)
	if err != nil {
		c.log.Debug("an undecodable $cbs request", "err", err)
		return
	}
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
		// Tokens expire on the wall clock that signed them, not on the
		// emulated clock a test may have moved by days.
		if err := sas.Verify(token, c.s.cfg.Keys, audience, time.Now()); err != nil {
			status, desc = 401, "InvalidSignature: "+err.Error()
		} else {
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
	c.sendResponse(l, m, resp)
}

// sendResponse sends a response to a $cbs or $management request on the
// session's link for responses.
func (c *conn) sendResponse(l *link, req, resp *amqp.Message) {
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
	t := strings.TrimPrefix(token, "SharedAccessSignature ")
	for _, part := range strings.Split(t, "&") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k != "se" {
			continue
		}
		if u, err := url.QueryUnescape(v); err == nil {
			v = u
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.Unix(n, 0)
		}
	}
	return time.Now().Add(15 * time.Minute)
}

package difftest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// serverNames matches the names a broker makes up: queue names of
// queue.declare with an empty name and consumer tags of basic.consume with an
// empty tag.
var serverNames = regexp.MustCompile(`amq\.(gen|ctag)-[A-Za-z0-9_\-]+`)

// normaliser rewrites server-made names to amq.gen-<n> and amq.ctag-<n>, n
// counting from 1 per kind in order of first appearance in one transcript.
type normaliser struct {
	seen  map[string]string
	count map[string]int
}

func newNormaliser() *normaliser {
	return &normaliser{seen: map[string]string{}, count: map[string]int{}}
}

func (n *normaliser) line(s string) string {
	return serverNames.ReplaceAllStringFunc(s, func(name string) string {
		if p, ok := n.seen[name]; ok {
			return p
		}
		kind := serverNames.FindStringSubmatch(name)[1]
		n.count[kind]++
		p := "amq." + kind + "-" + strconv.Itoa(n.count[kind])
		n.seen[name] = p
		return p
	})
}

// formatValue writes a field value with its Go type, as amqp091-go decoded
// it: int64(1), uint8(3), "text", []byte("raw"), <time> for a timestamp,
// {k=v, ...} for a table (keys sorted), [a, b] for an array (order kept).
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case string:
		return strconv.Quote(v)
	case []byte:
		return fmt.Sprintf("[]byte(%q)", v)
	case time.Time:
		return "<time>"
	case amqp.Table:
		return formatTable(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case amqp.Decimal:
		return fmt.Sprintf("decimal(scale=%d, value=%d)", v.Scale, v.Value)
	default:
		return fmt.Sprintf("%T(%v)", v, v)
	}
}

// formatTable writes a table as {k1=v1, k2=v2} with sorted keys.
func formatTable(t amqp.Table) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + formatValue(t[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// props writes the message properties a client sees, each only when set.
type props struct {
	Headers         amqp.Table
	ContentType     string
	ContentEncoding string
	DeliveryMode    uint8
	Priority        uint8
	CorrelationID   string
	ReplyTo         string
	Expiration      string
	MessageID       string
	Timestamp       time.Time
	Type            string
	UserID          string
	AppID           string
}

func (p props) String() string {
	var b strings.Builder
	str := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%q", name, v)
		}
	}
	str("content-type", p.ContentType)
	str("content-encoding", p.ContentEncoding)
	if p.DeliveryMode != 0 {
		fmt.Fprintf(&b, " delivery-mode=%d", p.DeliveryMode)
	}
	if p.Priority != 0 {
		fmt.Fprintf(&b, " priority=%d", p.Priority)
	}
	str("correlation-id", p.CorrelationID)
	str("reply-to", p.ReplyTo)
	str("expiration", p.Expiration)
	str("message-id", p.MessageID)
	if !p.Timestamp.IsZero() {
		b.WriteString(" timestamp=<time>")
	}
	str("type", p.Type)
	str("user-id", p.UserID)
	str("app-id", p.AppID)
	if p.Headers != nil {
		b.WriteString(" headers=" + formatTable(p.Headers))
	}
	return b.String()
}

// formatDelivery writes a message from basic.deliver or basic.get-ok.
func formatDelivery(d amqp.Delivery) string {
	p := props{d.Headers, d.ContentType, d.ContentEncoding, d.DeliveryMode, d.Priority,
		d.CorrelationId, d.ReplyTo, d.Expiration, d.MessageId, d.Timestamp, d.Type, d.UserId, d.AppId}
	return fmt.Sprintf("tag=%d body=%q exchange=%q rk=%q redelivered=%t%s",
		d.DeliveryTag, d.Body, d.Exchange, d.RoutingKey, d.Redelivered, p)
}

// formatReturn writes a basic.return.
func formatReturn(r amqp.Return) string {
	p := props{r.Headers, r.ContentType, r.ContentEncoding, r.DeliveryMode, r.Priority,
		r.CorrelationId, r.ReplyTo, r.Expiration, r.MessageId, r.Timestamp, r.Type, r.UserId, r.AppId}
	return fmt.Sprintf("basic.return %d %s exchange=%q rk=%q body=%q%s",
		r.ReplyCode, r.ReplyText, r.Exchange, r.RoutingKey, r.Body, p)
}

// flags writes the names of the true booleans, each after a space.
func flags(pairs ...any) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			b.WriteString(" " + pairs[i].(string))
		}
	}
	return b.String()
}

// argsSuffix writes " args={...}" for a non-empty table.
func argsSuffix(t amqp.Table) string {
	if len(t) == 0 {
		return ""
	}
	return " args=" + formatTable(t)
}

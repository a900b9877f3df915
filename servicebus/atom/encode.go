package atom

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
)

// The descriptions are written as the service writes them: elements in
// the order of its DataContracts (the order of real responses where one
// was available, else the .NET SDK's request order, which the service's
// serializer requires), the service namespace as the default one, i: for
// XMLSchema-instance, d2p1: for CountDetails. Elements the service writes
// with fixed values here (IsAnonymousAccessible, EntityAvailabilityStatus,
// EnableExpress...) are written so, for clients that read them.

// xmlBuf writes XML text.
type xmlBuf struct {
	bytes.Buffer
}

// open writes a start tag; attrs are name, value pairs.
func (b *xmlBuf) open(name string, attrs ...string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.attrs(attrs)
	b.WriteByte('>')
}

// empty writes an empty element.
func (b *xmlBuf) empty(name string, attrs ...string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.attrs(attrs)
	b.WriteString("/>")
}

func (b *xmlBuf) attrs(attrs []string) {
	for i := 0; i+1 < len(attrs); i += 2 {
		b.WriteByte(' ')
		b.WriteString(attrs[i])
		b.WriteString(`="`)
		b.escape(attrs[i+1], true)
		b.WriteByte('"')
	}
}

// close writes an end tag.
func (b *xmlBuf) close(name string) {
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

// elem writes an element with text.
func (b *xmlBuf) elem(name, text string) {
	b.open(name)
	b.escape(text, false)
	b.close(name)
}

// escape writes s as XML text as .NET's XmlWriter does: &, < and > (and "
// in an attribute) as entities, apostrophes as they are, and characters
// XML cannot carry as U+FFFD.
func (b *xmlBuf) escape(s string, attr bool) {
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && attr:
			b.WriteString("&quot;")
		case r == '\r':
			b.WriteString("&#xD;")
		case r == '\n' && attr:
			b.WriteString("&#xA;")
		case r == '\t' && attr:
			b.WriteString("&#x9;")
		case r < 0x20 && r != '\n' && r != '\t', r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
}

func (b *xmlBuf) boolean(name string, v bool)           { b.elem(name, strconv.FormatBool(v)) }
func (b *xmlBuf) integer(name string, v int64)          { b.elem(name, strconv.FormatInt(v, 10)) }
func (b *xmlBuf) duration(name string, d time.Duration) { b.elem(name, adapters.FormatXMLDuration(d)) }
func (b *xmlBuf) timestamp(name string, t time.Time)    { b.elem(name, descriptionTime(t)) }

// optional writes an element for a string that is set.
func (b *xmlBuf) optional(name, v string) {
	if v != "" {
		b.elem(name, v)
	}
}

// descriptionTime writes a description's time as .NET does: RFC 3339 in
// UTC with up to 7 fractional digits, and the zero time as
// "0001-01-01T00:00:00Z".
func descriptionTime(t time.Time) string {
	if t.IsZero() {
		return "0001-01-01T00:00:00Z"
	}
	return t.UTC().Format("2006-01-02T15:04:05.9999999Z07:00")
}

// atomTime writes an ATOM date (published, updated) in whole seconds.
func atomTime(t time.Time) string {
	if t.IsZero() {
		return "0001-01-01T00:00:00Z"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// openDescription writes a description's start tag with its namespace
// declarations.
func (b *xmlBuf) openDescription(name string) {
	b.open(name, "xmlns", nsSB, "xmlns:i", nsXSI)
}

// writeQueue writes a QueueDescription.
func writeQueue(b *xmlBuf, q *QueueProperties, rt Runtime) {
	b.openDescription("QueueDescription")
	b.duration("LockDuration", q.LockDuration)
	b.integer("MaxSizeInMegabytes", int64(q.MaxSizeInMegabytes))
	b.boolean("RequiresDuplicateDetection", q.RequiresDuplicateDetection)
	b.boolean("RequiresSession", q.RequiresSession)
	b.duration("DefaultMessageTimeToLive", q.DefaultMessageTimeToLive)
	b.boolean("DeadLetteringOnMessageExpiration", q.DeadLetteringOnMessageExpiration)
	b.duration("DuplicateDetectionHistoryTimeWindow", q.DuplicateDetectionHistoryTimeWindow)
	b.integer("MaxDeliveryCount", int64(q.MaxDeliveryCount))
	b.boolean("EnableBatchedOperations", q.EnableBatchedOperations)
	b.integer("SizeInBytes", rt.SizeInBytes)
	b.integer("MessageCount", rt.MessageCount())
	b.boolean("IsAnonymousAccessible", false)
	b.elem("AuthorizationRules", "")
	b.elem("Status", statusOrActive(q.Status))
	b.optional("ForwardTo", q.ForwardTo)
	b.optional("UserMetadata", q.UserMetadata)
	b.timestamp("CreatedAt", rt.CreatedAt)
	b.timestamp("UpdatedAt", rt.UpdatedAt)
	b.timestamp("AccessedAt", rt.AccessedAt)
	b.boolean("SupportOrdering", !q.EnablePartitioning)
	writeCountDetails(b, rt)
	b.duration("AutoDeleteOnIdle", q.AutoDeleteOnIdle)
	b.boolean("EnablePartitioning", q.EnablePartitioning)
	b.elem("EntityAvailabilityStatus", "Available")
	b.optional("ForwardDeadLetteredMessagesTo", q.ForwardDeadLetteredMessagesTo)
	b.boolean("EnableExpress", false)
	b.integer("MaxMessageSizeInKilobytes", q.MaxMessageSizeInKilobytes)
	b.close("QueueDescription")
}

// writeTopic writes a TopicDescription.
func writeTopic(b *xmlBuf, t *TopicProperties, rt Runtime) {
	b.openDescription("TopicDescription")
	b.duration("DefaultMessageTimeToLive", t.DefaultMessageTimeToLive)
	b.integer("MaxSizeInMegabytes", int64(t.MaxSizeInMegabytes))
	b.boolean("RequiresDuplicateDetection", t.RequiresDuplicateDetection)
	b.duration("DuplicateDetectionHistoryTimeWindow", t.DuplicateDetectionHistoryTimeWindow)
	b.boolean("EnableBatchedOperations", t.EnableBatchedOperations)
	b.integer("SizeInBytes", rt.SizeInBytes)
	b.boolean("FilteringMessagesBeforePublishing", false)
	b.boolean("IsAnonymousAccessible", false)
	b.elem("AuthorizationRules", "")
	b.elem("Status", statusOrActive(t.Status))
	b.optional("UserMetadata", t.UserMetadata)
	b.timestamp("CreatedAt", rt.CreatedAt)
	b.timestamp("UpdatedAt", rt.UpdatedAt)
	b.timestamp("AccessedAt", rt.AccessedAt)
	b.boolean("SupportOrdering", t.SupportOrdering)
	writeCountDetails(b, rt)
	b.integer("SubscriptionCount", int64(rt.SubscriptionCount))
	b.duration("AutoDeleteOnIdle", t.AutoDeleteOnIdle)
	b.boolean("EnablePartitioning", t.EnablePartitioning)
	b.elem("EntityAvailabilityStatus", "Available")
	b.boolean("EnableSubscriptionPartitioning", false)
	b.boolean("EnableExpress", false)
	b.integer("MaxMessageSizeInKilobytes", t.MaxMessageSizeInKilobytes)
	b.integer("SqlFilterCount", int64(rt.SQLFilterCount))
	b.integer("CorrelationFilterCount", int64(rt.CorrelationFilterCount))
	b.close("TopicDescription")
}

// writeSubscription writes a SubscriptionDescription (without its
// DefaultRuleDescription, which the service does not return).
func writeSubscription(b *xmlBuf, s *SubscriptionProperties, rt Runtime) {
	b.openDescription("SubscriptionDescription")
	b.duration("LockDuration", s.LockDuration)
	b.boolean("RequiresSession", s.RequiresSession)
	b.duration("DefaultMessageTimeToLive", s.DefaultMessageTimeToLive)
	b.boolean("DeadLetteringOnMessageExpiration", s.DeadLetteringOnMessageExpiration)
	b.boolean("DeadLetteringOnFilterEvaluationExceptions", s.DeadLetteringOnFilterEvaluationExceptions)
	b.integer("MessageCount", rt.MessageCount())
	b.integer("MaxDeliveryCount", int64(s.MaxDeliveryCount))
	b.boolean("EnableBatchedOperations", s.EnableBatchedOperations)
	b.elem("Status", statusOrActive(s.Status))
	b.optional("ForwardTo", s.ForwardTo)
	b.optional("UserMetadata", s.UserMetadata)
	b.timestamp("CreatedAt", rt.CreatedAt)
	b.timestamp("UpdatedAt", rt.UpdatedAt)
	b.timestamp("AccessedAt", rt.AccessedAt)
	writeCountDetails(b, rt)
	b.duration("AutoDeleteOnIdle", s.AutoDeleteOnIdle)
	b.optional("ForwardDeadLetteredMessagesTo", s.ForwardDeadLetteredMessagesTo)
	b.elem("EntityAvailabilityStatus", "Available")
	b.close("SubscriptionDescription")
}

// writeCountDetails writes the counts in the 2011 namespace, as d2p1:.
func writeCountDetails(b *xmlBuf, rt Runtime) {
	b.open("CountDetails", "xmlns:d2p1", nsSB2011)
	b.integer("d2p1:ActiveMessageCount", clampInt32(rt.ActiveMessageCount))
	b.integer("d2p1:DeadLetterMessageCount", clampInt32(rt.DeadLetterMessageCount))
	b.integer("d2p1:ScheduledMessageCount", clampInt32(rt.ScheduledMessageCount))
	b.integer("d2p1:TransferMessageCount", clampInt32(rt.TransferMessageCount))
	b.integer("d2p1:TransferDeadLetterMessageCount", clampInt32(rt.TransferDeadLetterMessageCount))
	b.close("CountDetails")
}

// writeRule writes a RuleDescription; its CreatedAt is rt's.
func writeRule(b *xmlBuf, r *RuleProperties, rt Runtime) {
	b.openDescription("RuleDescription")
	writeFilter(b, r.Filter)
	writeAction(b, r.Action)
	b.timestamp("CreatedAt", rt.CreatedAt)
	b.elem("Name", r.Name)
	b.close("RuleDescription")
}

// compatibilityLevel is the SQL dialect level the service writes.
const compatibilityLevel = "20"

func writeFilter(b *xmlBuf, f Filter) {
	switch f.Type {
	case CorrelationFilter:
		c := f.Correlation
		b.open("Filter", "i:type", string(CorrelationFilter))
		b.optional("CorrelationId", c.CorrelationID)
		b.optional("MessageId", c.MessageID)
		b.optional("To", c.To)
		b.optional("ReplyTo", c.ReplyTo)
		b.optional("Label", c.Subject)
		b.optional("SessionId", c.SessionID)
		b.optional("ReplyToSessionId", c.ReplyToSessionID)
		b.optional("ContentType", c.ContentType)
		writeValues(b, "Properties", c.Properties)
		b.close("Filter")
		return
	case TrueFilter:
		f.SQLExpression = "1=1"
	case FalseFilter:
		f.SQLExpression = "1=0"
	default:
		f.Type = SQLFilter
	}
	b.open("Filter", "i:type", string(f.Type))
	b.elem("SqlExpression", f.SQLExpression)
	b.elem("CompatibilityLevel", compatibilityLevel)
	writeValues(b, "Parameters", f.Parameters)
	b.close("Filter")
}

func writeAction(b *xmlBuf, a *Action) {
	if a == nil {
		b.empty("Action", "i:type", "EmptyRuleAction")
		return
	}
	b.open("Action", "i:type", "SqlRuleAction")
	b.elem("SqlExpression", a.SQLExpression)
	b.elem("CompatibilityLevel", compatibilityLevel)
	writeValues(b, "Parameters", a.Parameters)
	b.close("Action")
}

// writeValues writes a Parameters or Properties list, keys sorted; nothing
// for an empty map.
func writeValues(b *xmlBuf, name string, m map[string]any) {
	if len(m) == 0 {
		return
	}
	b.open(name)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		typ, text := typedValue(m[k])
		b.open("KeyValueOfstringanyType")
		b.elem("Key", k)
		b.open("Value", "i:type", "d6p1:"+typ, "xmlns:d6p1", nsXSD)
		b.escape(text, false)
		b.close("Value")
		b.close("KeyValueOfstringanyType")
	}
	b.close(name)
}

// typedValue returns a value's XML schema type and text (see
// Filter.Parameters); other Go types are written as strings.
func typedValue(v any) (typ, text string) {
	switch v := v.(type) {
	case string:
		return "string", v
	case bool:
		return "boolean", strconv.FormatBool(v)
	case int32:
		return "int", strconv.FormatInt(int64(v), 10)
	case int:
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return "int", strconv.Itoa(v)
		}
		return "long", strconv.Itoa(v)
	case int64:
		return "long", strconv.FormatInt(v, 10)
	case float32:
		return "float", strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return "double", strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		return "dateTime", v.UTC().Format(time.RFC3339Nano)
	case time.Duration:
		return "duration", adapters.FormatXMLDuration(v)
	}
	return "string", fmt.Sprint(v)
}

// writeNamespaceInfo writes a NamespaceInfo.
func writeNamespaceInfo(b *xmlBuf, ni NamespaceInfo) {
	sku := ni.MessagingSKU
	if sku == "" {
		sku = "Standard"
	}
	typ := ni.NamespaceType
	if typ == "" {
		typ = "Messaging"
	}
	b.openDescription("NamespaceInfo")
	b.timestamp("CreatedTime", ni.CreatedAt)
	b.elem("MessagingSKU", sku)
	if ni.MessagingUnits > 0 {
		b.integer("MessagingUnits", int64(ni.MessagingUnits))
	}
	b.timestamp("ModifiedTime", ni.ModifiedAt)
	b.elem("Name", ni.Name)
	b.elem("NamespaceType", typ)
	b.close("NamespaceInfo")
}

// writeDescription writes e's description, whichever kind it is.
func writeDescription(b *xmlBuf, e Entry) {
	switch {
	case e.Queue != nil:
		writeQueue(b, e.Queue, e.Runtime)
	case e.Topic != nil:
		writeTopic(b, e.Topic, e.Runtime)
	case e.Subscription != nil:
		writeSubscription(b, e.Subscription, e.Runtime)
	case e.Rule != nil:
		writeRule(b, e.Rule, e.Runtime)
	}
}

// entryHead is what an ATOM entry says besides its content.
type entryHead struct {
	id, title, author  string
	published, updated time.Time
}

// writeEntry writes an <entry>; inFeed leaves out the namespace the feed
// declares.
func writeEntry(b *xmlBuf, h entryHead, inFeed bool, content func(*xmlBuf)) {
	if inFeed {
		b.open("entry")
	} else {
		b.open("entry", "xmlns", nsAtom)
	}
	b.elem("id", h.id)
	b.open("title", "type", "text")
	b.escape(h.title, false)
	b.close("title")
	b.elem("published", atomTime(h.published))
	b.elem("updated", atomTime(h.updated))
	b.open("author")
	b.elem("name", h.author)
	b.close("author")
	b.empty("link", "rel", "self", "href", h.id)
	b.open("content", "type", "application/xml")
	content(b)
	b.close("content")
	b.close("entry")
}

// statusOrActive defaults an empty status.
func statusOrActive(s string) string {
	if s == "" {
		return StatusActive
	}
	return s
}

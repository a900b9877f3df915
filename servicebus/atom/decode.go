package atom

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// Namespaces of the ATOM management API.
const (
	nsAtom   = "http://www.w3.org/2005/Atom"
	nsSB     = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
	nsSB2011 = "http://schemas.microsoft.com/netservices/2011/06/servicebus"
	nsXSI    = "http://www.w3.org/2001/XMLSchema-instance"
	nsXSD    = "http://www.w3.org/2001/XMLSchema"
	nsMSSer  = "http://schemas.microsoft.com/2003/10/Serialization/"
)

// DecodeEntry reads the body of a PUT: an ATOM <entry> whose <content>
// holds one QueueDescription, TopicDescription, SubscriptionDescription or
// RuleDescription. It returns an Entry with Path.Kind and the properties of
// that kind set, the properties the body leaves out at their defaults.
// Names are matched by local name in any namespace and prefixes are
// resolved, so the Go SDK's generated prefixes read as the .NET and JS
// SDKs' i: and d2p1:. Elements it does not know (CreatedAt, CountDetails,
// AuthorizationRules...) are ignored, as the service ignores them. Errors
// are core.EINVALID.
func DecodeEntry(data []byte) (Entry, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	root, err := firstElement(d)
	if err != nil {
		return Entry{}, err
	}
	if root.Name.Local != "entry" {
		return Entry{}, invalid("The request body must be an ATOM entry, not <%s>.", root.Name.Local)
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return Entry{}, syntaxError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "content" {
				if err := d.Skip(); err != nil {
					return Entry{}, syntaxError(err)
				}
				continue
			}
			desc, err := firstElement(d)
			if err != nil {
				return Entry{}, err
			}
			return decodeDescription(d, desc)
		case xml.EndElement:
			return Entry{}, invalid("The ATOM entry has no content.")
		}
	}
}

// decodeDescription reads the description element start begins.
func decodeDescription(d *xml.Decoder, start xml.StartElement) (Entry, error) {
	switch start.Name.Local {
	case "QueueDescription":
		var x xmlQueue
		if err := d.DecodeElement(&x, &start); err != nil {
			return Entry{}, syntaxError(err)
		}
		q, err := x.properties()
		if err != nil {
			return Entry{}, err
		}
		return Entry{Path: Path{Kind: KindQueue}, Queue: &q}, nil
	case "TopicDescription":
		var x xmlTopic
		if err := d.DecodeElement(&x, &start); err != nil {
			return Entry{}, syntaxError(err)
		}
		t, err := x.properties()
		if err != nil {
			return Entry{}, err
		}
		return Entry{Path: Path{Kind: KindTopic}, Topic: &t}, nil
	case "SubscriptionDescription":
		var x xmlSubscription
		if err := d.DecodeElement(&x, &start); err != nil {
			return Entry{}, syntaxError(err)
		}
		s, err := x.properties()
		if err != nil {
			return Entry{}, err
		}
		return Entry{Path: Path{Kind: KindSubscription}, Subscription: &s}, nil
	case "RuleDescription":
		var x xmlRule
		if err := d.DecodeElement(&x, &start); err != nil {
			return Entry{}, syntaxError(err)
		}
		r, err := x.properties()
		if err != nil {
			return Entry{}, err
		}
		return Entry{Path: Path{Kind: KindRule}, Rule: &r}, nil
	}
	return Entry{}, invalid("The description type '%s' is not supported.", start.Name.Local)
}

// firstElement returns the next start element, skipping the prolog,
// comments and white space; text or an end element first is an error.
func firstElement(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, syntaxError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return xml.StartElement{}, invalid("The request body has text where an element was expected.")
			}
		case xml.EndElement:
			return xml.StartElement{}, invalid("The ATOM content is empty.")
		}
	}
}

// invalid is a 400's message.
func invalid(format string, args ...any) error {
	return core.Errorf(core.EINVALID, format, args...)
}

// syntaxError turns a decoding error into a 400.
func syntaxError(err error) error {
	if errors.Is(err, io.EOF) {
		return invalid("The request body is incomplete XML.")
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce
	}
	return invalid("The request body is not valid XML: %v", err)
}

// The xml* types below mirror the descriptions with every value as text,
// so that a bad value is a 400 naming its element rather than a generic
// decoding error. Tags without a namespace match any namespace.

type xmlQueue struct {
	LockDuration                        *string `xml:"LockDuration"`
	MaxSizeInMegabytes                  *string `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          *string `xml:"RequiresDuplicateDetection"`
	RequiresSession                     *string `xml:"RequiresSession"`
	DefaultMessageTimeToLive            *string `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration    *string `xml:"DeadLetteringOnMessageExpiration"`
	DuplicateDetectionHistoryTimeWindow *string `xml:"DuplicateDetectionHistoryTimeWindow"`
	MaxDeliveryCount                    *string `xml:"MaxDeliveryCount"`
	EnableBatchedOperations             *string `xml:"EnableBatchedOperations"`
	Status                              *string `xml:"Status"`
	AutoDeleteOnIdle                    *string `xml:"AutoDeleteOnIdle"`
	EnablePartitioning                  *string `xml:"EnablePartitioning"`
	ForwardTo                           *string `xml:"ForwardTo"`
	ForwardDeadLetteredMessagesTo       *string `xml:"ForwardDeadLetteredMessagesTo"`
	UserMetadata                        *string `xml:"UserMetadata"`
	MaxMessageSizeInKilobytes           *string `xml:"MaxMessageSizeInKilobytes"`
}

func (x *xmlQueue) properties() (QueueProperties, error) {
	q := DefaultQueue()
	var p fieldParser
	p.duration("LockDuration", x.LockDuration, &q.LockDuration)
	p.int32("MaxSizeInMegabytes", x.MaxSizeInMegabytes, &q.MaxSizeInMegabytes)
	p.bool("RequiresDuplicateDetection", x.RequiresDuplicateDetection, &q.RequiresDuplicateDetection)
	p.bool("RequiresSession", x.RequiresSession, &q.RequiresSession)
	p.duration("DefaultMessageTimeToLive", x.DefaultMessageTimeToLive, &q.DefaultMessageTimeToLive)
	p.bool("DeadLetteringOnMessageExpiration", x.DeadLetteringOnMessageExpiration, &q.DeadLetteringOnMessageExpiration)
	p.duration("DuplicateDetectionHistoryTimeWindow", x.DuplicateDetectionHistoryTimeWindow, &q.DuplicateDetectionHistoryTimeWindow)
	p.int32("MaxDeliveryCount", x.MaxDeliveryCount, &q.MaxDeliveryCount)
	p.bool("EnableBatchedOperations", x.EnableBatchedOperations, &q.EnableBatchedOperations)
	p.status(x.Status, &q.Status)
	p.duration("AutoDeleteOnIdle", x.AutoDeleteOnIdle, &q.AutoDeleteOnIdle)
	p.bool("EnablePartitioning", x.EnablePartitioning, &q.EnablePartitioning)
	p.string(x.ForwardTo, &q.ForwardTo)
	p.string(x.ForwardDeadLetteredMessagesTo, &q.ForwardDeadLetteredMessagesTo)
	p.string(x.UserMetadata, &q.UserMetadata)
	p.int64("MaxMessageSizeInKilobytes", x.MaxMessageSizeInKilobytes, &q.MaxMessageSizeInKilobytes)
	return q, p.err
}

type xmlTopic struct {
	DefaultMessageTimeToLive            *string `xml:"DefaultMessageTimeToLive"`
	MaxSizeInMegabytes                  *string `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          *string `xml:"RequiresDuplicateDetection"`
	DuplicateDetectionHistoryTimeWindow *string `xml:"DuplicateDetectionHistoryTimeWindow"`
	EnableBatchedOperations             *string `xml:"EnableBatchedOperations"`
	Status                              *string `xml:"Status"`
	AutoDeleteOnIdle                    *string `xml:"AutoDeleteOnIdle"`
	EnablePartitioning                  *string `xml:"EnablePartitioning"`
	SupportOrdering                     *string `xml:"SupportOrdering"`
	UserMetadata                        *string `xml:"UserMetadata"`
	MaxMessageSizeInKilobytes           *string `xml:"MaxMessageSizeInKilobytes"`
}

func (x *xmlTopic) properties() (TopicProperties, error) {
	t := DefaultTopic()
	var p fieldParser
	p.duration("DefaultMessageTimeToLive", x.DefaultMessageTimeToLive, &t.DefaultMessageTimeToLive)
	p.int32("MaxSizeInMegabytes", x.MaxSizeInMegabytes, &t.MaxSizeInMegabytes)
	p.bool("RequiresDuplicateDetection", x.RequiresDuplicateDetection, &t.RequiresDuplicateDetection)
	p.duration("DuplicateDetectionHistoryTimeWindow", x.DuplicateDetectionHistoryTimeWindow, &t.DuplicateDetectionHistoryTimeWindow)
	p.bool("EnableBatchedOperations", x.EnableBatchedOperations, &t.EnableBatchedOperations)
	p.status(x.Status, &t.Status)
	p.duration("AutoDeleteOnIdle", x.AutoDeleteOnIdle, &t.AutoDeleteOnIdle)
	p.bool("EnablePartitioning", x.EnablePartitioning, &t.EnablePartitioning)
	p.bool("SupportOrdering", x.SupportOrdering, &t.SupportOrdering)
	p.string(x.UserMetadata, &t.UserMetadata)
	p.int64("MaxMessageSizeInKilobytes", x.MaxMessageSizeInKilobytes, &t.MaxMessageSizeInKilobytes)
	return t, p.err
}

type xmlSubscription struct {
	LockDuration                              *string      `xml:"LockDuration"`
	RequiresSession                           *string      `xml:"RequiresSession"`
	DefaultMessageTimeToLive                  *string      `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration          *string      `xml:"DeadLetteringOnMessageExpiration"`
	DeadLetteringOnFilterEvaluationExceptions *string      `xml:"DeadLetteringOnFilterEvaluationExceptions"`
	DefaultRuleDescription                    *xmlRuleBody `xml:"DefaultRuleDescription"`
	MaxDeliveryCount                          *string      `xml:"MaxDeliveryCount"`
	EnableBatchedOperations                   *string      `xml:"EnableBatchedOperations"`
	Status                                    *string      `xml:"Status"`
	ForwardTo                                 *string      `xml:"ForwardTo"`
	UserMetadata                              *string      `xml:"UserMetadata"`
	ForwardDeadLetteredMessagesTo             *string      `xml:"ForwardDeadLetteredMessagesTo"`
	AutoDeleteOnIdle                          *string      `xml:"AutoDeleteOnIdle"`
}

func (x *xmlSubscription) properties() (SubscriptionProperties, error) {
	s := DefaultSubscription()
	var p fieldParser
	p.duration("LockDuration", x.LockDuration, &s.LockDuration)
	p.bool("RequiresSession", x.RequiresSession, &s.RequiresSession)
	p.duration("DefaultMessageTimeToLive", x.DefaultMessageTimeToLive, &s.DefaultMessageTimeToLive)
	p.bool("DeadLetteringOnMessageExpiration", x.DeadLetteringOnMessageExpiration, &s.DeadLetteringOnMessageExpiration)
	p.bool("DeadLetteringOnFilterEvaluationExceptions", x.DeadLetteringOnFilterEvaluationExceptions, &s.DeadLetteringOnFilterEvaluationExceptions)
	p.int32("MaxDeliveryCount", x.MaxDeliveryCount, &s.MaxDeliveryCount)
	p.bool("EnableBatchedOperations", x.EnableBatchedOperations, &s.EnableBatchedOperations)
	p.status(x.Status, &s.Status)
	p.string(x.ForwardTo, &s.ForwardTo)
	p.string(x.UserMetadata, &s.UserMetadata)
	p.string(x.ForwardDeadLetteredMessagesTo, &s.ForwardDeadLetteredMessagesTo)
	p.duration("AutoDeleteOnIdle", x.AutoDeleteOnIdle, &s.AutoDeleteOnIdle)
	if p.err != nil {
		return s, p.err
	}
	if x.DefaultRuleDescription != nil {
		r, err := x.DefaultRuleDescription.properties()
		if err != nil {
			return s, err
		}
		s.DefaultRule = &r
	}
	return s, nil
}

// xmlRuleBody is a RuleDescription or a DefaultRuleDescription.
type xmlRuleBody struct {
	Filter *xmlFilter `xml:"Filter"`
	Action *xmlAction `xml:"Action"`
	Name   *string    `xml:"Name"`
}

type xmlRule = xmlRuleBody

func (x *xmlRuleBody) properties() (RuleProperties, error) {
	r := DefaultRule()
	if x.Name != nil && strings.TrimSpace(*x.Name) != "" {
		r.Name = strings.TrimSpace(*x.Name)
	}
	if x.Filter != nil {
		f, err := x.Filter.filter()
		if err != nil {
			return r, err
		}
		r.Filter = f
	}
	if x.Action != nil {
		a, err := x.Action.action()
		if err != nil {
			return r, err
		}
		r.Action = a
	}
	return r, nil
}

type xmlFilter struct {
	Attrs            []xml.Attr    `xml:",any,attr"`
	SQLExpression    *string       `xml:"SqlExpression"`
	Parameters       *xmlKeyValues `xml:"Parameters"`
	CorrelationID    *string       `xml:"CorrelationId"`
	MessageID        *string       `xml:"MessageId"`
	To               *string       `xml:"To"`
	ReplyTo          *string       `xml:"ReplyTo"`
	Label            *string       `xml:"Label"`
	SessionID        *string       `xml:"SessionId"`
	ReplyToSessionID *string       `xml:"ReplyToSessionId"`
	ContentType      *string       `xml:"ContentType"`
	Properties       *xmlKeyValues `xml:"Properties"`
}

func (x *xmlFilter) filter() (Filter, error) {
	typ := instanceType(x.Attrs)
	if typ == "" && x.SQLExpression != nil {
		typ = string(SQLFilter)
	}
	switch FilterType(typ) {
	case TrueFilter:
		return Filter{Type: TrueFilter, SQLExpression: "1=1"}, nil
	case FalseFilter:
		return Filter{Type: FalseFilter, SQLExpression: "1=0"}, nil
	case SQLFilter:
		if x.SQLExpression == nil || strings.TrimSpace(*x.SQLExpression) == "" {
			return Filter{}, invalid("The SqlFilter has no SqlExpression.")
		}
		params, err := x.Parameters.values("Parameters")
		if err != nil {
			return Filter{}, err
		}
		return Filter{Type: SQLFilter, SQLExpression: *x.SQLExpression, Parameters: params}, nil
	case CorrelationFilter:
		props, err := x.Properties.values("Properties")
		if err != nil {
			return Filter{}, err
		}
		c := Correlation{Properties: props}
		for _, f := range []struct {
			from *string
			to   *string
		}{
			{x.CorrelationID, &c.CorrelationID}, {x.MessageID, &c.MessageID}, {x.To, &c.To},
			{x.ReplyTo, &c.ReplyTo}, {x.Label, &c.Subject}, {x.SessionID, &c.SessionID},
			{x.ReplyToSessionID, &c.ReplyToSessionID}, {x.ContentType, &c.ContentType},
		} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
		return Filter{Type: CorrelationFilter, Correlation: c}, nil
	case "":
		return Filter{}, invalid("The rule's Filter has no type.")
	}
	return Filter{}, invalid("The filter type '%s' is not supported.", typ)
}

type xmlAction struct {
	Attrs         []xml.Attr    `xml:",any,attr"`
	SQLExpression *string       `xml:"SqlExpression"`
	Parameters    *xmlKeyValues `xml:"Parameters"`
}

func (x *xmlAction) action() (*Action, error) {
	typ := instanceType(x.Attrs)
	if typ == "" && x.SQLExpression != nil {
		typ = "SqlRuleAction"
	}
	switch typ {
	case "", "EmptyRuleAction":
		return nil, nil
	case "SqlRuleAction":
		if x.SQLExpression == nil || strings.TrimSpace(*x.SQLExpression) == "" {
			return nil, invalid("The SqlRuleAction has no SqlExpression.")
		}
		params, err := x.Parameters.values("Parameters")
		if err != nil {
			return nil, err
		}
		return &Action{SQLExpression: *x.SQLExpression, Parameters: params}, nil
	}
	return nil, invalid("The rule action type '%s' is not supported.", typ)
}

// instanceType returns the local part of an element's xsi:type, whatever
// its prefix ("i:", "_XMLSchema-instance:"), and drops any prefix of the
// type's own QName.
func instanceType(attrs []xml.Attr) string {
	for _, a := range attrs {
		if a.Name.Local == "type" && (a.Name.Space == nsXSI || a.Name.Space == "i" || a.Name.Space == "xsi") {
			return localPart(strings.TrimSpace(a.Value))
		}
	}
	return ""
}

// localPart drops a QName's prefix.
func localPart(qname string) string {
	if i := strings.LastIndexByte(qname, ':'); i >= 0 {
		return qname[i+1:]
	}
	return qname
}

// xmlKeyValues is a Parameters or Properties list
// (ArrayOfKeyValueOfstringanyType).
type xmlKeyValues struct {
	Items []xmlKeyValue `xml:"KeyValueOfstringanyType"`
}

type xmlKeyValue struct {
	Key   *string   `xml:"Key"`
	Value *xmlValue `xml:"Value"`
}

// xmlValue keeps the element's own namespace declarations to resolve the
// prefix of its xsi:type ("d6p1:int" with xmlns:d6p1 on the element, as
// every SDK writes it).
type xmlValue struct {
	Attrs []xml.Attr `xml:",any,attr"`
	Text  string     `xml:",chardata"`
}

// maxValues caps a list, so that a hostile body cannot build a huge map.
const maxValues = 1000

// values reads a list into a map; nil for a missing or empty list.
func (x *xmlKeyValues) values(field string) (map[string]any, error) {
	if x == nil || len(x.Items) == 0 {
		return nil, nil
	}
	if len(x.Items) > maxValues {
		return nil, invalid("The %s list has more than %d items.", field, maxValues)
	}
	m := make(map[string]any, len(x.Items))
	for _, kv := range x.Items {
		if kv.Key == nil {
			return nil, invalid("An item of %s has no Key.", field)
		}
		if kv.Value == nil {
			return nil, invalid("The item '%s' of %s has no Value.", *kv.Key, field)
		}
		v, err := kv.Value.value()
		if err != nil {
			return nil, invalid("The value of '%s' in %s: %s", *kv.Key, field, core.ErrorMessage(err))
		}
		m[*kv.Key] = v
	}
	return m, nil
}

// value reads a typed value: xs:string, boolean, int, long, short, byte,
// float, double, decimal, dateTime and duration, and the serialization
// namespace's guid and char, as Go values (see Filter.Parameters).
func (x *xmlValue) value() (any, error) {
	var typ string
	for _, a := range x.Attrs {
		if a.Name.Local == "type" && (a.Name.Space == nsXSI || a.Name.Space == "i" || a.Name.Space == "xsi") {
			typ = strings.TrimSpace(a.Value)
		}
	}
	if typ == "" {
		return x.Text, nil
	}
	local := localPart(typ)
	if prefix, _, ok := strings.Cut(typ, ":"); ok {
		for _, a := range x.Attrs {
			if a.Name.Space == "xmlns" && a.Name.Local == prefix && a.Value != nsXSD && a.Value != nsMSSer {
				return nil, invalid("The type '%s' is not supported.", typ)
			}
		}
	}
	s := strings.TrimSpace(x.Text)
	switch local {
	case "string", "guid":
		return x.Text, nil
	case "char":
		return s, nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, invalid("'%s' is not a boolean.", s)
		}
		return b, nil
	case "int", "short", "byte", "unsignedByte", "unsignedShort":
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, invalid("'%s' is not an int.", s)
		}
		return int32(n), nil
	case "long", "unsignedInt":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, invalid("'%s' is not a long.", s)
		}
		return n, nil
	case "float":
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return nil, invalid("'%s' is not a float.", s)
		}
		return float32(f), nil
	case "double", "decimal":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, invalid("'%s' is not a double.", s)
		}
		return f, nil
	case "dateTime":
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t, err = time.Parse("2006-01-02T15:04:05.9999999", s)
		}
		if err != nil {
			return nil, invalid("'%s' is not a dateTime.", s)
		}
		return t.UTC(), nil
	case "duration":
		d, err := adapters.ParseTimeSpan(s)
		if err != nil {
			return nil, invalid("'%s' is not a duration.", s)
		}
		return d, nil
	}
	return nil, invalid("The type '%s' is not supported.", typ)
}

// fieldParser converts description fields, keeping the first error.
type fieldParser struct {
	err error
}

func (p *fieldParser) fail(field, value, what string) {
	if p.err == nil {
		p.err = invalid("The value '%s' of the property '%s' is not a valid %s.", value, field, what)
	}
}

func (p *fieldParser) duration(field string, s *string, to *time.Duration) {
	if s == nil || p.err != nil {
		return
	}
	d, err := adapters.ParseTimeSpan(*s)
	if err != nil {
		p.fail(field, *s, "duration")
		return
	}
	*to = d
}

func (p *fieldParser) bool(field string, s *string, to *bool) {
	if s == nil || p.err != nil {
		return
	}
	switch strings.TrimSpace(*s) {
	case "true", "True", "1":
		*to = true
	case "false", "False", "0":
		*to = false
	default:
		p.fail(field, *s, "boolean")
	}
}

func (p *fieldParser) int32(field string, s *string, to *int32) {
	if s == nil || p.err != nil {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*s), 10, 32)
	if err != nil {
		p.fail(field, *s, "Int32")
		return
	}
	*to = int32(n)
}

func (p *fieldParser) int64(field string, s *string, to *int64) {
	if s == nil || p.err != nil {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*s), 10, 64)
	if err != nil {
		p.fail(field, *s, "Int64")
		return
	}
	*to = n
}

// status reads an EntityStatus: one of the service's names, any case.
func (p *fieldParser) status(s *string, to *string) {
	if s == nil || p.err != nil {
		return
	}
	for _, name := range [...]string{StatusActive, "Disabled", "SendDisabled", "ReceiveDisabled",
		"Creating", "Deleting", "Renaming", "Restoring", "Unknown"} {
		if strings.EqualFold(strings.TrimSpace(*s), name) {
			*to = name
			return
		}
	}
	p.fail("Status", *s, "EntityStatus")
}

func (p *fieldParser) string(s *string, to *string) {
	if s == nil || p.err != nil {
		return
	}
	*to = *s
}

// clampInt32 keeps a count within the int32 the Go admin client reads
// CountDetails into.
func clampInt32(n int64) int64 {
	return min(max(n, 0), math.MaxInt32)
}

package adapters

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// ServiceBusKind is the kind of a Service Bus entity.
type ServiceBusKind uint8

// The Service Bus entity kinds.
const (
	ServiceBusQueue ServiceBusKind = iota
	ServiceBusTopic
	ServiceBusSubscription
)

// String returns the kind as the service writes it in messages: "Queue",
// "Topic" or "Subscription".
func (k ServiceBusKind) String() string {
	switch k {
	case ServiceBusQueue:
		return "Queue"
	case ServiceBusTopic:
		return "Topic"
	case ServiceBusSubscription:
		return "Subscription"
	}
	return "Entity"
}

// ServiceBusTier is the namespace's pricing tier, which changes what an
// entity may be (SB-3).
type ServiceBusTier uint8

// The Service Bus tiers. Standard is the zero value.
const (
	ServiceBusStandard ServiceBusTier = iota
	ServiceBusPremium
	ServiceBusBasic
)

// TimeSpanMax stands for .NET's TimeSpan.MaxValue (10675199.02:48:05.4775807),
// which Service Bus uses for "never". A time.Duration cannot hold that many
// 100 ns ticks, so ParseTimeSpan returns TimeSpanMax for it and for anything
// past the range of time.Duration (about 292 years), and the formatters
// write TimeSpan.MaxValue for it.
const TimeSpanMax time.Duration = math.MaxInt64

// Limits the service applies to entity properties.
const (
	// ServiceBusMinTTL is the shortest DefaultMessageTimeToLive.
	ServiceBusMinTTL = time.Second
	// ServiceBusBasicTTL is the default and the longest
	// DefaultMessageTimeToLive of a basic-tier entity (SB-3).
	ServiceBusBasicTTL = 14 * 24 * time.Hour
	// ServiceBusMinAutoDeleteOnIdle is the shortest AutoDeleteOnIdle (SB-10).
	ServiceBusMinAutoDeleteOnIdle = 5 * time.Minute
)

// ServiceBusEntity holds the properties of a queue, topic or subscription
// that matter for expiry. Start from NewServiceBusEntity, which fills in the
// service's defaults, and set what the client sent.
type ServiceBusEntity struct {
	Kind ServiceBusKind
	Tier ServiceBusTier
	// Namespace is the namespace's name, for error texts.
	Namespace string
	// DefaultMessageTimeToLive is the entity's default message TTL and the
	// ceiling on message TTLs (SB-2); TimeSpanMax means never (SB-3).
	DefaultMessageTimeToLive time.Duration
	// DeadLetteringOnMessageExpiration moves expired messages to the
	// entity's dead-letter queue instead of dropping them (SB-8).
	DeadLetteringOnMessageExpiration bool
	// AutoDeleteOnIdle deletes the entity after that long idle (SB-10);
	// TimeSpanMax means never.
	AutoDeleteOnIdle time.Duration
	// RequiresSession groups a queue's or subscription's messages into
	// sessions by their session id, each received under a session lock
	// (SS-1..SS-5).
	RequiresSession bool
}

// NewServiceBusEntity returns an entity of that kind and tier with the
// service's defaults: no TTL and no idle deletion (TimeSpan.MaxValue for
// both; on the basic tier the TTL then becomes 14 days, SB-3).
func NewServiceBusEntity(kind ServiceBusKind, tier ServiceBusTier) ServiceBusEntity {
	return ServiceBusEntity{
		Kind:                     kind,
		Tier:                     tier,
		DefaultMessageTimeToLive: TimeSpanMax,
		AutoDeleteOnIdle:         TimeSpanMax,
	}
}

// maxTimeSpanText is TimeSpan.MaxValue as .NET prints it.
const maxTimeSpanText = "10675199.02:48:05.4775807"

// Validate checks the properties as the service does when an entity is
// created or updated. It returns a *core.Error with code core.EINVALID whose
// message is the sentence the service puts after "SubCode=40000. " in its
// 400 Bad Request; the front-end adds that prefix and the TrackingId tail.
func (e ServiceBusEntity) Validate() error {
	basic := e.Tier == ServiceBusBasic
	if basic && e.Kind != ServiceBusQueue {
		return core.Errorf(core.EINVALID,
			"The namespace '%s' is using 'Basic' tier, which has no topics or subscriptions. This operation is only supported in 'Standard' or 'Premium' tier.",
			e.Namespace)
	}
	if e.DefaultMessageTimeToLive < ServiceBusMinTTL {
		if basic {
			return core.Errorf(core.EINVALID,
				"The property value for 'DefaultMessageTimeToLive' must be between %s and %s when the namespace '%s' is using 'Basic' tier.",
				FormatTimeSpan(ServiceBusMinTTL), FormatTimeSpan(ServiceBusBasicTTL), e.Namespace)
		}
		return core.Errorf(core.EINVALID,
			"The property value for 'DefaultMessageTimeToLive' must be between %s and %s.",
			FormatTimeSpan(ServiceBusMinTTL), maxTimeSpanText)
	}
	if basic && e.AutoDeleteOnIdle != TimeSpanMax {
		return core.Errorf(core.EINVALID,
			"The property 'AutoDeleteOnIdle' cannot be set when creating a %s because the namespace '%s' is using 'Basic' tier.",
			e.Kind, e.Namespace)
	}
	if e.AutoDeleteOnIdle < ServiceBusMinAutoDeleteOnIdle {
		return core.Errorf(core.EINVALID,
			"The property value for 'AutoDeleteOnIdle' must be between %s and %s.",
			FormatTimeSpan(ServiceBusMinAutoDeleteOnIdle), maxTimeSpanText)
	}
	return nil
}

// serviceBusRules are the SEMANTICS.md rules every Service Bus entity applies.
var serviceBusRules = core.RuleIDs{
	ItemTTL:    "SB-1",
	DefaultTTL: "SB-2",
	Ceiling:    "SB-2",
	Never:      "SB-3",
	Scheduled:  "SB-4",
	Expire:     "SB-8",
	LockLost:   "SB-7",
	Idle:       "SB-10",
	Deferred:   "SB-9",
}

// Policy validates the entity and returns its core policy: the entity's TTL
// as both default and ceiling (SB-2), never for TimeSpan.MaxValue (SB-3) and
// 14 days at most on the basic tier, counted from the (possibly scheduled)
// enqueue time (SB-1, SB-4) and not applied to messages already stored
// (SB-12), expired messages dead-lettered or dropped (SB-8), and idle
// deletion with the uses SB-10 counts for the entity's kind; a queue or
// subscription that requires sessions keeps its messages in sessions whose
// locks run out by SS-3.
func (e ServiceBusEntity) Policy() (core.Policy, error) {
	if err := e.Validate(); err != nil {
		return core.Policy{}, err
	}
	ttl := serviceBusTTL(e.DefaultMessageTimeToLive)
	if e.Tier == ServiceBusBasic && !ttl.Less(core.After(ServiceBusBasicTTL)) {
		ttl = core.After(ServiceBusBasicTTL)
	}
	p := core.Policy{
		DefaultTTL: ttl,
		MaxTTL:     ttl,
		Base:       core.FromEnqueue,
		OnExpire:   core.Drop,
		IdleTTL:    serviceBusTTL(e.AutoDeleteOnIdle),
		IdleUses:   serviceBusIdleUses(e.Kind),
		Rules:      serviceBusRules,
	}
	if e.DeadLetteringOnMessageExpiration {
		p.OnExpire = core.DeadLetter
	}
	if e.RequiresSession && e.Kind != ServiceBusTopic {
		p.Sessions = true
		p.Rules.SessionLock = "SS-3"
	}
	return p, nil
}

// serviceBusTTL reads a Service Bus duration, TimeSpanMax being never.
func serviceBusTTL(d time.Duration) core.TTL {
	if d == TimeSpanMax {
		return core.Forever
	}
	return core.After(d)
}

// serviceBusIdleUses returns what keeps an entity of the kind alive (SB-10).
// Auto-forwarding counts as activity for every kind.
func serviceBusIdleUses(k ServiceBusKind) core.Use {
	switch k {
	case ServiceBusTopic:
		return core.UseSend | core.UseUpdate | core.UseSchedule | core.UseChild | core.UseForward
	case ServiceBusSubscription:
		return core.UseReceive | core.UseUpdate | core.UseRule | core.UseBrowse | core.UseForward
	}
	return core.UseSend | core.UseReceive | core.UseUpdate | core.UseSchedule | core.UseBrowse | core.UseForward
}

// ServiceBusCopyTTL returns the TTL to put on a subscription's copy of a
// message sent to a topic whose policy is topic (SB-5): the message's own
// TTL cut to the topic's default, or the topic's default when the message
// has none. The subscription's own policy then cuts it to the
// subscription's default, so the copy lives min(message TTL, topic default,
// subscription default). When neither the message nor the topic limits it,
// the result is unset, so that the subscription's default applies as such.
func ServiceBusCopyTTL(topic core.Policy, msg core.TTL) core.TTL {
	ceiling := topic.MaxTTL
	if !ceiling.IsSet() {
		ceiling = topic.DefaultTTL
	}
	switch {
	case msg.IsSet() && !ceiling.Less(msg):
		return msg
	case ceiling.Finite():
		return ceiling
	case msg.IsSet():
		return msg
	}
	return core.NoTTL
}

// ticksPerSecond is the number of 100 ns .NET ticks in a second.
const ticksPerSecond = 10_000_000

// ParseTimeSpan reads a Service Bus duration in either form the APIs use:
// the XML schema duration of the ATOM management API and Config.json
// ("P14D", "PT10M", "P10675199DT2H48M5.4775807S"; years count 365 days and
// months 30, as .NET reads them) or .NET's TimeSpan text ("1.00:00:00",
// "00:10:00", "10675199.02:48:05.4775807"). A duration past the range of
// time.Duration, TimeSpan.MaxValue included, is TimeSpanMax. Negative
// durations are returned as such, for Validate to refuse.
func ParseTimeSpan(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	if neg {
		t = t[1:]
	}
	var ticks *big.Int
	var ok bool
	if strings.HasPrefix(t, "P") || strings.HasPrefix(t, "p") {
		ticks, ok = parseXMLDuration(t[1:])
	} else {
		ticks, ok = parseDotNetTimeSpan(t)
	}
	if !ok {
		return 0, core.Errorf(core.EINVALID, "The value '%s' is not a valid duration.", s)
	}
	if ticks.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		return 0, core.Errorf(core.EINVALID, "The value '%s' is out of the range of a TimeSpan.", s)
	}
	ns := new(big.Int).Mul(ticks, big.NewInt(100))
	if !ns.IsInt64() {
		if neg {
			return math.MinInt64, nil
		}
		return TimeSpanMax, nil
	}
	d := time.Duration(ns.Int64())
	if neg {
		d = -d
	}
	return d, nil
}

// parseXMLDuration reads what follows the P of an XML schema duration into
// ticks.
func parseXMLDuration(s string) (*big.Int, bool) {
	const day = 24 * 3600 * ticksPerSecond
	total := new(big.Int)
	add := func(n *big.Int, unit int64) { total.Add(total, new(big.Int).Mul(n, big.NewInt(unit))) }
	if s == "" {
		return nil, false
	}
	inTime, seen := false, false
	last := -1
	for s != "" {
		if s[0] == 'T' || s[0] == 't' {
			if inTime || len(s) == 1 {
				return nil, false
			}
			inTime, last = true, 2
			s = s[1:]
			continue
		}
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) {
			return nil, false
		}
		n, _ := new(big.Int).SetString(s[:i], 10)
		frac := ""
		if s[i] == '.' {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 || j == len(s) || s[j] != 'S' && s[j] != 's' || !inTime {
				return nil, false
			}
			frac, s = s[i+1:j], s[j:]
		} else {
			s = s[i:]
		}
		units := "YMD"
		if inTime {
			units = "HMS"
		}
		pos := strings.Index(units, strings.ToUpper(s[:1]))
		s = s[1:]
		if pos < 0 {
			return nil, false
		}
		if inTime {
			pos += 3
		}
		if pos <= last {
			return nil, false
		}
		last, seen = pos, true
		switch pos {
		case 0: // years: 365 days
			add(n, 365*day)
		case 1: // months: whole years and 30 days each
			y, m := new(big.Int).DivMod(n, big.NewInt(12), new(big.Int))
			add(y, 365*day)
			add(m, 30*day)
		case 2:
			add(n, day)
		case 3:
			add(n, 3600*ticksPerSecond)
		case 4:
			add(n, 60*ticksPerSecond)
		case 5:
			add(n, ticksPerSecond)
			total.Add(total, big.NewInt(fractionTicks(frac)))
		}
	}
	return total, seen
}

// parseDotNetTimeSpan reads .NET's TimeSpan text: "d", "[d.]hh:mm[:ss[.f]]"
// or "d:hh:mm:ss[.f]", into ticks.
func parseDotNetTimeSpan(s string) (*big.Int, bool) {
	num := func(p string, max int64) (int64, bool) {
		if p == "" || len(p) > 19 {
			return 0, false
		}
		for _, c := range p {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(p, 10, 64)
		return n, err == nil && (max < 0 || n <= max)
	}
	var days, h, m, sec int64
	var frac string
	if i := strings.LastIndexByte(s, '.'); i >= 0 && strings.Count(s, ":") >= 2 && i > strings.LastIndexByte(s, ':') {
		s, frac = s[:i], s[i+1:]
		if _, ok := num(frac, -1); !ok || len(frac) > 7 {
			return nil, false
		}
	}
	parts := strings.Split(s, ":")
	var ok bool
	switch len(parts) {
	case 1:
		if frac != "" {
			return nil, false
		}
		days, ok = num(parts[0], -1)
	case 2, 3:
		first := parts[0]
		if i := strings.IndexByte(first, '.'); i >= 0 {
			if days, ok = num(first[:i], -1); !ok {
				return nil, false
			}
			first = first[i+1:]
		}
		if h, ok = num(first, 23); !ok {
			return nil, false
		}
		if m, ok = num(parts[1], 59); !ok {
			return nil, false
		}
		if len(parts) == 3 {
			sec, ok = num(parts[2], 59)
		} else if frac != "" {
			ok = false
		}
	case 4:
		if days, ok = num(parts[0], -1); !ok {
			return nil, false
		}
		if h, ok = num(parts[1], 23); !ok {
			return nil, false
		}
		if m, ok = num(parts[2], 59); !ok {
			return nil, false
		}
		sec, ok = num(parts[3], 59)
	}
	if !ok {
		return nil, false
	}
	t := new(big.Int).Mul(big.NewInt(days), big.NewInt(24*3600*ticksPerSecond))
	t.Add(t, big.NewInt((h*3600+m*60+sec)*ticksPerSecond+fractionTicks(frac)))
	return t, true
}

// fractionTicks turns the digits after a decimal point of seconds into
// ticks, dropping what is finer than a tick.
func fractionTicks(frac string) int64 {
	if len(frac) > 7 {
		frac = frac[:7]
	}
	frac += strings.Repeat("0", 7-len(frac))
	n, _ := strconv.ParseInt(frac, 10, 64)
	return n
}

// FormatTimeSpan writes d as .NET writes a TimeSpan ("c" format):
// "[-][d.]hh:mm:ss[.fffffff]", and TimeSpanMax as TimeSpan.MaxValue,
// "10675199.02:48:05.4775807".
func FormatTimeSpan(d time.Duration) string {
	if d == TimeSpanMax {
		return maxTimeSpanText
	}
	var b strings.Builder
	u := uint64(d)
	if d < 0 {
		b.WriteByte('-')
		u = uint64(-d)
	}
	ticks := u / 100
	secs := ticks / ticksPerSecond
	if days := secs / 86400; days > 0 {
		fmt.Fprintf(&b, "%d.", days)
	}
	fmt.Fprintf(&b, "%02d:%02d:%02d", secs/3600%24, secs/60%60, secs%60)
	if f := ticks % ticksPerSecond; f != 0 {
		fmt.Fprintf(&b, ".%07d", f)
	}
	return b.String()
}

// FormatXMLDuration writes d as .NET writes a TimeSpan in XML (the ATOM
// management API): "P14D", "PT10M", "P1DT2H3M4.5S", "PT0S" for zero, and
// TimeSpanMax as "P10675199DT2H48M5.4775807S".
func FormatXMLDuration(d time.Duration) string {
	if d == TimeSpanMax {
		return "P10675199DT2H48M5.4775807S"
	}
	var b strings.Builder
	u := uint64(d)
	if d < 0 {
		b.WriteByte('-')
		u = uint64(-d)
	}
	ticks := u / 100
	secs := ticks / ticksPerSecond
	days, h, m, s, f := secs/86400, secs/3600%24, secs/60%60, secs%60, ticks%ticksPerSecond
	b.WriteByte('P')
	if days > 0 {
		fmt.Fprintf(&b, "%dD", days)
	}
	if h == 0 && m == 0 && s == 0 && f == 0 {
		if days == 0 {
			b.WriteString("T0S")
		}
		return b.String()
	}
	b.WriteByte('T')
	if h > 0 {
		fmt.Fprintf(&b, "%dH", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dM", m)
	}
	if s > 0 || f > 0 {
		fmt.Fprintf(&b, "%d", s)
		if f > 0 {
			b.WriteString(strings.TrimRight(fmt.Sprintf(".%07d", f), "0"))
		}
		b.WriteByte('S')
	}
	return b.String()
}

package dashboard

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// EntityView is one entity as GET /api/entities shows it. TTLs are written
// for people, as core.TTL.String does: "none" (unset), "forever", "10m",
// "14d", "1500ms".
type EntityView struct {
	Protocol        string         `json:"protocol"`
	Name            string         `json:"name"`
	Kind            string         `json:"kind"`
	Parent          string         `json:"parent,omitempty"`
	DeadLetterQueue string         `json:"deadLetterQueue,omitempty"`
	Durable         bool           `json:"durable"`
	Created         time.Time      `json:"created"`
	Policy          PolicyView     `json:"policy"`
	Settings        []core.Setting `json:"settings,omitempty"`
	Counts          core.Counts    `json:"counts"`
	// Stats count what happened to the entity's items since it was created
	// or lapse started.
	Stats     core.Stats `json:"stats"`
	Consumers int        `json:"consumers"`
	LastUsed  time.Time  `json:"lastUsed"`
	// NextDue is the earliest item expiry, lock expiry or scheduled time;
	// absent when nothing is pending.
	NextDue *time.Time `json:"nextDue,omitempty"`
	// IdleDeadline is when the entity is deleted if it stays unused.
	IdleDeadline *time.Time `json:"idleDeadline,omitempty"`
}

// PolicyView is an entity's core.Policy in words.
type PolicyView struct {
	DefaultTTL               string   `json:"defaultTtl"`
	MaxTTL                   string   `json:"maxTtl"`
	IgnoreItemTTL            bool     `json:"ignoreItemTtl"`
	Base                     string   `json:"base"`     // "enqueue" or "modified"
	OnExpire                 string   `json:"onExpire"` // "drop" or "dead-letter"
	Retroactive              bool     `json:"retroactive"`
	HeadOnly                 bool     `json:"headOnly"`
	IdleTTL                  string   `json:"idleTtl"`
	IdleUses                 []string `json:"idleUses"`
	IdleOnlyWithoutConsumers bool     `json:"idleOnlyWithoutConsumers"`
	// Sessions is true for an entity whose items are held in sessions.
	Sessions bool         `json:"sessions,omitempty"`
	Rules    core.RuleIDs `json:"rules"`
}

// ItemView is one item as GET /api/entities/{protocol}/{name}/items shows
// it, with its computed expiry (DueAt, absent for never), the rule that set
// it and why. The body comes whole as standard base64 in Body; Payload is
// the message body as the protocol's clients see it, when Body holds more
// (a Service Bus item is the whole encoded AMQP message), with its size in
// PayloadSize; BodyText is a preview of the first 200 characters of the
// payload (else of the body) when it is valid UTF-8 text (absent
// otherwise). Meta, the protocol's metadata, is base64 too.
type ItemView struct {
	Seq uint64 `json:"seq"`
	Key string `json:"key,omitempty"`
	// Group is the item's group: a Service Bus message's session id, a
	// Cosmos DB item's partition.
	Group         string     `json:"group,omitempty"`
	State         string     `json:"state"`
	EnqueuedAt    time.Time  `json:"enqueuedAt"`
	ModifiedAt    time.Time  `json:"modifiedAt"`
	ScheduledAt   *time.Time `json:"scheduledAt,omitempty"`
	TTL           string     `json:"ttl"`
	EffectiveTTL  string     `json:"effectiveTtl"`
	DueAt         *time.Time `json:"dueAt,omitempty"`
	Rule          string     `json:"rule,omitempty"`
	Reason        string     `json:"reason,omitempty"`
	LockedUntil   *time.Time `json:"lockedUntil,omitempty"`
	DeliveryCount uint32     `json:"deliveryCount"`
	Persistent    bool       `json:"persistent"`
	BodySize      int        `json:"bodySize"`
	Body          string     `json:"body"`
	Payload       string     `json:"payload,omitempty"`
	PayloadSize   int        `json:"payloadSize,omitempty"`
	BodyText      *string    `json:"bodyText,omitempty"`
	Meta          string     `json:"meta,omitempty"`
	// Properties are the item's properties in its protocol's words
	// ("MessageID", "content_type", "_etag"), and DeadLetter says, for a
	// dead letter, why it died and where from (core.Engine.Describe).
	Properties []core.Setting  `json:"properties,omitempty"`
	DeadLetter *DeadLetterView `json:"deadLetter,omitempty"`
}

// previewRunes is how many characters BodyText shows.
const previewRunes = 200

// defaultItemLimit is how many items the items call returns without ?limit=.
const defaultItemLimit = 100

// getEntities answers GET /api/entities[?protocol=P].
func (s *Server) getEntities(c *gin.Context) {
	infos := s.cfg.Engine.Entities(s.cfg.Clock.Now(), c.Query("protocol"))
	out := make([]EntityView, len(infos))
	for i, in := range infos {
		out[i] = entityView(in)
	}
	c.JSON(http.StatusOK, out)
}

// getItems answers GET /api/entities/{protocol}/{name...}/items[?limit=N]:
// the entity's items in sequence order, at most N (default 100, 0 for all).
// GET /api/entities/{protocol}/{name...}/sessions goes to getSessions.
func (s *Server) getItems(c *gin.Context) {
	rest := strings.TrimPrefix(c.Param("rest"), "/")
	if name, ok := strings.CutSuffix(rest, "/sessions"); ok && name != "" {
		s.getSessions(c, core.EntityKey{Protocol: c.Param("protocol"), Name: name})
		return
	}
	name, ok := strings.CutSuffix(rest, "/items")
	if !ok || name == "" {
		s.writeError(c, core.Errorf(core.ENOTFOUND, "no such endpoint: %s %s (use /api/entities/{protocol}/{name}/items)", c.Request.Method, c.Request.URL.Path))
		return
	}
	limit, err := itemLimit(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	k := core.EntityKey{Protocol: c.Param("protocol"), Name: name}
	items, err := s.cfg.Engine.Items(s.cfg.Clock.Now(), k, limit)
	if err != nil {
		s.writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, s.itemViews(k, items))
}

// itemViews returns the views of items of entity k, each described by its
// protocol (properties, dead letter).
func (s *Server) itemViews(k core.EntityKey, items []core.Item) []ItemView {
	out := make([]ItemView, len(items))
	for i := range items {
		out[i] = itemView(&items[i])
		out[i].describe(s.cfg.Engine.Describe(k, &items[i]))
	}
	return out
}

// describe adds an item's description to its view.
func (v *ItemView) describe(d core.Description) {
	v.Properties = d.Properties
	if d.Payload != nil {
		v.Payload = base64.StdEncoding.EncodeToString(d.Payload)
		v.PayloadSize = len(d.Payload)
		v.BodyText = preview(d.Payload)
	}
	if dl := d.DeadLetter; dl != nil {
		v.DeadLetter = &DeadLetterView{Reason: dl.Reason, Description: dl.Description, Source: dl.Source, Rule: dl.Rule}
	}
}

func entityView(in core.EntityInfo) EntityView {
	return EntityView{
		Protocol:        in.Protocol,
		Name:            in.Name,
		Kind:            in.Kind,
		Parent:          in.Parent,
		DeadLetterQueue: in.DeadLetterQueue,
		Durable:         in.Durable,
		Created:         in.Created,
		Policy:          policyView(&in.Policy),
		Settings:        in.Settings,
		Counts:          in.Counts,
		Stats:           in.Stats,
		Consumers:       in.Consumers,
		LastUsed:        in.LastUsed,
		NextDue:         optTime(in.NextDue),
		IdleDeadline:    optTime(in.IdleDeadline),
	}
}

func policyView(p *core.Policy) PolicyView {
	v := PolicyView{
		DefaultTTL:               p.DefaultTTL.String(),
		MaxTTL:                   p.MaxTTL.String(),
		IgnoreItemTTL:            p.IgnoreItemTTL,
		Base:                     "enqueue",
		OnExpire:                 "drop",
		Retroactive:              p.Retroactive,
		HeadOnly:                 p.HeadOnly,
		IdleTTL:                  p.IdleTTL.String(),
		IdleUses:                 useNames(p.IdleUses),
		IdleOnlyWithoutConsumers: p.IdleOnlyWithoutConsumers,
		Sessions:                 p.Sessions,
		Rules:                    p.Rules,
	}
	if p.Base == core.FromModified {
		v.Base = "modified"
	}
	if p.OnExpire == core.DeadLetter {
		v.OnExpire = "dead-letter"
	}
	return v
}

// useNames lists the uses of a core.Use set, in the order core declares them.
func useNames(u core.Use) []string {
	names := []struct {
		u    core.Use
		name string
	}{
		{core.UseSend, "send"}, {core.UseReceive, "receive"}, {core.UseBrowse, "browse"},
		{core.UseUpdate, "update"}, {core.UseSchedule, "schedule"}, {core.UseDeclare, "declare"},
		{core.UseConsume, "consume"}, {core.UseRule, "rule"}, {core.UseChild, "child"},
		{core.UseForward, "forward"},
	}
	out := []string{}
	for _, n := range names {
		if u&n.u != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func itemView(it *core.Item) ItemView {
	v := ItemView{
		Seq:           it.Seq,
		Key:           it.Key,
		Group:         it.Group,
		State:         it.State.String(),
		EnqueuedAt:    it.EnqueuedAt,
		ModifiedAt:    it.ModifiedAt,
		ScheduledAt:   optTime(it.ScheduledAt),
		TTL:           it.TTL.String(),
		EffectiveTTL:  it.EffectiveTTL.String(),
		DueAt:         optTime(it.DueAt),
		Rule:          it.Rule,
		Reason:        it.Reason,
		LockedUntil:   optTime(it.LockedUntil),
		DeliveryCount: it.DeliveryCount,
		Persistent:    it.Persistent,
		BodySize:      len(it.Body),
		Body:          base64.StdEncoding.EncodeToString(it.Body),
		BodyText:      preview(it.Body),
	}
	if len(it.Meta) > 0 {
		v.Meta = base64.StdEncoding.EncodeToString(it.Meta)
	}
	return v
}

// preview returns the first previewRunes characters of a UTF-8 body, or nil
// for a body that is not text.
func preview(b []byte) *string {
	if !utf8.Valid(b) {
		return nil
	}
	s := string(b)
	n := 0
	for i := range s {
		if n == previewRunes {
			s = s[:i]
			break
		}
		n++
	}
	return &s
}

// optTime returns nil for the zero time, so that "never" is absent rather
// than year 1.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

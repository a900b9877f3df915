package dashboard

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// overview is the data of the overview page: every entity of every
// protocol, as a tree under each protocol, and how to connect.
type overview struct {
	Now       time.Time
	Protocols []protocolEntities
	Connect   []connectHint
	Totals    core.Counts
	Entities  int
	// ShowBuiltin is true when the broker's own entities are shown
	// (?builtin=1); FoldURL is the overview's address with the other
	// choice.
	ShowBuiltin bool
	FoldURL     string
}

// protocolEntities are one protocol's entities, parents before children,
// with the columns the protocol has. Builtin counts the broker's own
// entities (builtin) among them, which Rows leave out unless shown.
type protocolEntities struct {
	Protocol string
	Cols     columns
	Rows     []overviewRow
	Builtin  int
	Total    int
}

// overviewRow is one entity in the overview's tree.
type overviewRow struct {
	EntityView
	Depth   int
	Builtin bool
}

// connectHint says how a client reaches one front-end.
type connectHint struct {
	Protocol string
	What     string
	Value    string
}

func (s *Server) overviewData(c *gin.Context) (any, error) {
	now := s.cfg.Clock.Now()
	infos := s.cfg.Engine.Entities(now, c.Query("protocol"))
	byProto := map[string][]EntityView{}
	var protos []string
	o := &overview{Now: now, Entities: len(infos)}
	for _, in := range infos {
		if _, ok := byProto[in.Protocol]; !ok {
			protos = append(protos, in.Protocol)
		}
		byProto[in.Protocol] = append(byProto[in.Protocol], entityView(in))
		o.Totals.Active += in.Counts.Active
		o.Totals.Scheduled += in.Counts.Scheduled
		o.Totals.Locked += in.Counts.Locked
		o.Totals.Deferred += in.Counts.Deferred
	}
	sortProtocols(protos)
	o.ShowBuiltin = c.Query("builtin") == "1"
	q := c.Request.URL.Query()
	if o.ShowBuiltin {
		q.Del("builtin")
	} else {
		q.Set("builtin", "1")
	}
	o.FoldURL = "./" // relative to the pages' base (pageData)
	if len(q) > 0 {
		o.FoldURL = "?" + q.Encode()
	}
	for _, p := range protos {
		pe := protocolEntities{Protocol: p, Cols: columnsOf(p), Total: len(byProto[p])}
		for _, r := range tree(byProto[p]) {
			if r.Builtin = builtin(&r.EntityView); r.Builtin {
				pe.Builtin++
				if !o.ShowBuiltin {
					continue
				}
			}
			pe.Rows = append(pe.Rows, r)
		}
		o.Protocols = append(o.Protocols, pe)
	}
	o.Connect = s.connectHints()
	return o, nil
}

// tree orders entities (sorted by name) so that each parent comes before
// its children, children indented one level deeper.
func tree(es []EntityView) []overviewRow {
	children := map[string][]EntityView{}
	known := map[string]bool{}
	for _, e := range es {
		known[e.Name] = true
	}
	var roots []EntityView
	for _, e := range es {
		if e.Parent != "" && known[e.Parent] && e.Parent != e.Name {
			children[e.Parent] = append(children[e.Parent], e)
			continue
		}
		roots = append(roots, e)
	}
	out := make([]overviewRow, 0, len(es))
	var walk func(e EntityView, depth int)
	walk = func(e EntityView, depth int) {
		out = append(out, overviewRow{EntityView: e, Depth: depth})
		if depth > 8 {
			return // a cycle of parents would be a bug; never loop on it
		}
		for _, ch := range children[e.Name] {
			walk(ch, depth+1)
		}
	}
	sort.SliceStable(roots, func(i, j int) bool { return kindRank(roots[i].Kind) < kindRank(roots[j].Kind) })
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

// kindRank orders the overview's top-level entities: the ones that hold
// items first, then the rest (RabbitMQ's exchanges and policies), each
// group by name.
func kindRank(kind string) int {
	switch kind {
	case "vhost", "database":
		return 0
	case "queue", "topic", "container", "subscription":
		return 1
	case "exchange":
		return 3
	case "policy", "operator-policy":
		return 4
	}
	return 2
}

// connectHints are the addresses clients use, from the listeners' bound
// addresses, written with localhost.
func (s *Server) connectHints() []connectHint {
	if s.cfg.Info == nil {
		return nil
	}
	ls := s.cfg.Info().Listeners
	port := func(name string) string {
		l, ok := ls[name]
		if !ok || !l.Served {
			return ""
		}
		_, p, err := net.SplitHostPort(l.Addr)
		if err != nil {
			return ""
		}
		return p
	}
	var out []connectHint
	if p := port("amqp"); p != "" {
		host := "localhost"
		if p != "5672" {
			host += ":" + p
		}
		out = append(out,
			connectHint{core.ServiceBus, "connection string", "Endpoint=sb://" + host + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"},
			connectHint{core.RabbitMQ, "URL", "amqp://guest:guest@localhost:" + p + "/"})
	}
	if p := port("amqps"); p != "" {
		out = append(out, connectHint{core.ServiceBus, "over TLS, for SDKs without UseDevelopmentEmulator, administration too (trust /cert.pem)",
			"Endpoint=sb://localhost:" + p + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;"})
	}
	if p := port("servicebusAdmin"); p != "" {
		out = append(out, connectHint{core.ServiceBus, "administration (HTTP and HTTPS)", "http://localhost:" + p + "/"})
	}
	if p := port("servicebusWebSocket"); p != "" {
		out = append(out, connectHint{core.ServiceBus, "AMQP over WebSockets, the SDKs' WebSocket transport (trust /cert.pem)", "wss://localhost:" + p + "/$servicebus/websocket"})
	}
	if p := port("rabbitmqManagement"); p != "" {
		out = append(out, connectHint{core.RabbitMQ, "management API", "http://localhost:" + p + "/api/"})
	}
	if p := port("cosmos"); p != "" {
		out = append(out, connectHint{core.Cosmos, "endpoint (the emulator's well-known key)", "https://localhost:" + p + "/"})
	}
	return out
}

// entityPage is the data of an entity's page.
type entityPage struct {
	Now      time.Time
	Entity   EntityView
	Children []EntityView
	Policy   []policyLine
	// Cols are the figures the entity's protocol has.
	Cols columns
	// Docs is true when the items are JSON documents (Cosmos DB), each
	// laid out in its Doc.
	Docs  bool
	Items []pageItem
	// Shown is how many items the page lists of Total.
	Shown, Total int
	// DeadLetters is true when some listed item is a dead letter.
	DeadLetters bool
	// CanQuery is true when the protocol has a query language for it.
	CanQuery bool
	// HasSessions is true for an entity whose items are held in sessions:
	// Sessions lists the first of its SessionTotal sessions.
	HasSessions  bool
	Sessions     []SessionView
	SessionTotal int
}

func (p *entityPage) pageTitle() string { return p.Entity.Name }

// pageItem is an item as its entity's page shows it: a document's
// properties laid out in Doc (nil when it is not a JSON document).
type pageItem struct {
	ItemView
	Doc *document
}

// pageItems is how many items an entity page lists.
const pageItems = 200

func (s *Server) entityData(c *gin.Context) (any, error) {
	now := s.cfg.Clock.Now()
	k := core.EntityKey{Protocol: c.Query("protocol"), Name: c.Query("name")}
	in, err := s.cfg.Engine.Info(now, k)
	if err != nil {
		return nil, err
	}
	items, err := s.cfg.Engine.Items(now, k, pageItems)
	if err != nil {
		return nil, err
	}
	p := &entityPage{Now: now, Entity: entityView(in), Policy: policyLines(&in.Policy), Cols: columnsOf(k.Protocol)}
	p.Docs = k.Protocol == core.Cosmos && in.Kind == "container"
	p.Total = in.Counts.Active + in.Counts.Scheduled + in.Counts.Locked + in.Counts.Deferred
	views := s.itemViews(k, items)
	p.Items = make([]pageItem, len(views))
	for i, v := range views {
		p.Items[i] = pageItem{ItemView: v}
		if p.Docs {
			p.Items[i].Doc = parseDocument(items[i].Body)
		}
		if v.DeadLetter != nil {
			p.DeadLetters = true
		}
	}
	p.Shown = len(p.Items)
	p.Total = max(p.Total, p.Shown)
	for _, e := range s.cfg.Engine.Entities(now, k.Protocol) {
		if e.Parent == k.Name && e.Name != k.Name {
			p.Children = append(p.Children, entityView(e))
		}
	}
	_, p.CanQuery = s.cfg.Queries[k.Protocol]
	if err := s.entitySessions(p, now, k); err != nil {
		return nil, err
	}
	return p, nil
}

// policyLine is one decision of an entity's core policy, in words, with
// the rule behind it.
type policyLine struct {
	Text string
	Rule string
}

// policyLines says what an entity's core.Policy does, one decision a line.
func policyLines(p *core.Policy) []policyLine {
	var out []policyLine
	add := func(rule, format string, args ...any) {
		out = append(out, policyLine{Text: fmt.Sprintf(format, args...), Rule: rule})
	}
	switch {
	case p.IgnoreItemTTL && p.DefaultTTL.Finite():
		add(p.Rules.DefaultTTL, "Every item expires %s after %s; items' own TTLs are ignored.", p.DefaultTTL, baseWords(p))
	case p.IgnoreItemTTL:
		add(p.Rules.Never, "Nothing expires: there is no default TTL, and items' own TTLs have no effect.")
	case p.DefaultTTL.Finite():
		add(p.Rules.DefaultTTL, "An item without a TTL of its own expires %s after %s.", p.DefaultTTL, baseWords(p))
	default:
		add(p.Rules.Never, "An item without a TTL of its own never expires.")
	}
	if !p.IgnoreItemTTL {
		add(p.Rules.ItemTTL, "An item's own TTL counts from %s.", baseWords(p))
	}
	if p.MaxTTL.Finite() {
		add(p.Rules.Ceiling, "An item's own TTL longer than %s is cut to %s.", p.MaxTTL, p.MaxTTL)
	}
	if p.Rules.Scheduled != "" {
		add(p.Rules.Scheduled, "A scheduled item's TTL counts from its scheduled enqueue time.")
	}
	switch p.OnExpire {
	case core.DeadLetter:
		add(p.Rules.Expire, "An expired item is dead-lettered.")
	case core.Release:
		add(p.Rules.Expire, "An item is held until its due time, then passed on.")
	default:
		add(p.Rules.Expire, "An expired item is dropped.")
	}
	if p.HeadOnly {
		add(p.Rules.HeadOnly, "An item expires only when it reaches the head of the queue; expired items behind a live one wait.")
	}
	if p.Retroactive {
		add("", "A change of the default TTL applies at once to the items already stored.")
	}
	if p.Rules.LockLost != "" {
		add(p.Rules.LockLost, "A locked or unacknowledged item does not expire; when its lock ends it is available again, and expires at once if it is due.")
	}
	if p.Rules.Deferred != "" {
		add(p.Rules.Deferred, "A deferred item never expires on its own; taking it checks its expiry.")
	}
	if p.IdleTTL.Finite() {
		uses := strings.Join(useNames(p.IdleUses), ", ")
		if uses == "" {
			uses = "nothing"
		}
		text := fmt.Sprintf("The entity is deleted after %s unused (uses that count: %s)", p.IdleTTL, uses)
		if p.IdleOnlyWithoutConsumers {
			text += ", counted only while it has no consumers"
		}
		add(p.Rules.Idle, "%s.", text)
	}
	return out
}

// baseWords says what a policy's TTLs count from.
func baseWords(p *core.Policy) string {
	if p.Base == core.FromModified {
		if p.BaseResolution >= time.Second {
			return "the last modification (in whole seconds, _ts)"
		}
		return "the last modification"
	}
	return "the enqueue time"
}

// eventsPage is the data of the event log.
type eventsPage struct {
	Events   []core.Event
	Protocol string
	Entity   string
	// Protocols and Entities offer the filters.
	Protocols []string
	Entities  []string
}

// eventsShown is how many events the log page shows, newest first.
const eventsShown = 500

func (s *Server) eventsData(c *gin.Context) (any, error) {
	p := &eventsPage{Protocol: c.Query("protocol"), Entity: c.Query("entity")}
	evs := s.cfg.Engine.Events(core.EventQuery{Protocol: p.Protocol, Entity: p.Entity})
	if len(evs) > eventsShown {
		evs = evs[len(evs)-eventsShown:]
	}
	for i := len(evs) - 1; i >= 0; i-- {
		p.Events = append(p.Events, evs[i])
	}
	seen := map[string]bool{}
	for _, e := range s.cfg.Engine.Entities(s.cfg.Clock.Now(), "") {
		if !seen[e.Protocol] {
			seen[e.Protocol] = true
			p.Protocols = append(p.Protocols, e.Protocol)
		}
		if p.Protocol == "" || p.Protocol == e.Protocol {
			p.Entities = append(p.Entities, e.Name)
		}
	}
	for _, pr := range []string{core.ServiceBus, core.RabbitMQ, core.Cosmos} {
		if !seen[pr] {
			p.Protocols = append(p.Protocols, pr)
		}
	}
	sortProtocols(p.Protocols)
	return p, nil
}

// explorerPage is the data of the data explorer: the entities that can be
// queried, and the one chosen.
type explorerPage struct {
	Targets  []core.EntityKey
	Protocol string
	Name     string
	Query    string
}

func (s *Server) explorerData(c *gin.Context) (any, error) {
	p := &explorerPage{Protocol: c.Query("protocol"), Name: c.Query("name"), Query: c.Query("query")}
	for _, e := range s.cfg.Engine.Entities(s.cfg.Clock.Now(), "") {
		if _, ok := s.cfg.Queries[e.Protocol]; ok && e.Kind == "container" {
			p.Targets = append(p.Targets, e.EntityKey)
		}
	}
	if p.Query == "" {
		p.Query = "SELECT * FROM c"
	}
	if p.Name == "" && len(p.Targets) > 0 {
		p.Protocol, p.Name = p.Targets[0].Protocol, p.Targets[0].Name
	}
	return p, nil
}

// deadLettersPage is the data of the dead-letter page.
type deadLettersPage struct {
	Entities []DeadLetterEntityView
	Total    int
}

// deadLettersShown is how many dead letters the page lists per entity.
const deadLettersShown = 100

func (s *Server) deadLettersData(c *gin.Context) (any, error) {
	es, err := s.deadLetterEntities(s.cfg.Clock.Now(), c.Query("protocol"), deadLettersShown)
	if err != nil {
		return nil, err
	}
	p := &deadLettersPage{Entities: es}
	for _, e := range es {
		p.Total += e.Count
	}
	return p, nil
}

package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/docs"
)

// web holds the UI: one template per page over layout.html and the static
// assets. With the rule texts of docs.Rules, everything is embedded, so the
// dashboard works offline.
//
//go:embed web
var web embed.FS

// pages are the UI's templates and the expiry rules, parsed once, at the
// first request that needs them (the ui method): parsing takes a few
// milliseconds, which lapse's start does without (issue 25.9).
type pages struct {
	sets  map[string]*template.Template // by page name
	rules []Rule
	rule  map[string]*Rule
}

// sharedPages parses the pages once for every Server: they are embedded.
var sharedPages = sync.OnceValues(loadPages)

// ui returns the parsed pages.
func (s *Server) ui() *pages {
	p, err := sharedPages()
	if err != nil {
		panic(err) // the embedded templates are fixed at build time; a test parses them
	}
	return p
}

// pageNames are the pages; each web/<name>.html defines "content" and may
// define fragments that its live regions reload.
var pageNames = []string{"overview", "entity", "deadletters", "events", "timeline", "explorer", "rules"}

func loadPages() (*pages, error) {
	p := &pages{sets: map[string]*template.Template{}, rules: parseRules(docs.Rules), rule: map[string]*Rule{}}
	for i := range p.rules {
		p.rule[p.rules[i].ID] = &p.rules[i]
	}
	funcs := template.FuncMap{
		"ts":         formatTime,
		"iso":        isoTime,
		"entityURL":  entityURL,
		"apiEntity":  apiEntity,
		"q":          url.QueryEscape,
		"protoTitle": protocolTitle,
		"ruleTitle": func(id string) string {
			if r := p.rule[id]; r != nil {
				return id + ": " + plainText(r.Text)
			}
			return id
		},
		"bytes": formatBytes,
		"lower": strings.ToLower,
		// purgesReadyOnly: the protocol's purge leaves unacknowledged items.
		"purgesReadyOnly": purgesReadyOnly,
		"add":             func(a, b int) int { return a + b },
		"short":           shortName,
		// hasRules is false for an entity whose policy names no rule: one
		// that holds no items (an exchange, a database).
		"hasRules": func(r core.RuleIDs) bool { return r != core.RuleIDs{} },
	}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(web, "web/layout.html", "web/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard page %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// pageRoutes serves the web UI: the pages, the fragments their live regions
// reload, and the static assets.
func (s *Server) pageRoutes(r *gin.Engine) {
	static, err := fs.Sub(web, "web/static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	r.StaticFS("/static", http.FS(static))
	r.GET("/", s.page("overview", "Overview"))
	r.GET("/entity", s.page("entity", "Entity"))
	r.GET("/deadletters", s.page("deadletters", "Dead letters"))
	r.GET("/events", s.page("events", "Event log"))
	r.GET("/timeline", s.page("timeline", "Timeline"))
	r.GET("/explorer", s.page("explorer", "Data explorer"))
	r.GET("/rules", s.page("rules", "Rules"))
	r.GET("/fragments/:name", s.fragment)
	r.GET("/api/stream", s.stream)
	r.GET("/api/timeline", s.getTimeline)
}

// pageData is what layout.html gets. Base is the path the pages are
// served under ("" for the default world's, /sandboxes/{id} for a
// sandbox's): layout.html makes it the document's base, and every link of
// the pages is relative to it.
type pageData struct {
	Base  string
	Page  string
	Title string
	Clock ClockState
	Query url.Values
	Data  any
}

// viewData reads what page name shows.
func (s *Server) viewData(name string, c *gin.Context) (any, error) {
	switch name {
	case "overview":
		return s.overviewData(c)
	case "entity":
		return s.entityData(c)
	case "deadletters":
		return s.deadLettersData(c)
	case "events":
		return s.eventsData(c)
	case "timeline":
		return s.timelineData(c)
	case "explorer":
		return s.explorerData(c)
	case "rules":
		return s.ui().rules, nil
	}
	return nil, core.Errorf(core.ENOTFOUND, "no such page %q", name)
}

func (s *Server) page(name, title string) gin.HandlerFunc {
	return func(c *gin.Context) {
		d, err := s.viewData(name, c)
		if err != nil {
			s.writePageError(c, err)
			return
		}
		if t, ok := d.(titled); ok {
			title = t.pageTitle()
		}
		s.render(c, s.ui().sets[name], "layout.html", pageData{
			Base: s.cfg.BasePath, Page: name, Title: title, Clock: s.clockState(s.cfg.Clock.Now()), Query: c.Request.URL.Query(), Data: d,
		})
	}
}

// titled data names its page.
type titled interface{ pageTitle() string }

// fragments are the parts of pages that reload live: name -> page and data.
var fragments = map[string]string{
	"overview":    "overview",
	"entity":      "entity",
	"items":       "entity",
	"deadletters": "deadletters",
	"events":      "events",
	"timeline":    "timeline",
}

// fragment answers GET /fragments/{name}?...: one live region of a page,
// rendered with the same data as the page.
func (s *Server) fragment(c *gin.Context) {
	name := c.Param("name")
	pg, ok := fragments[name]
	if !ok {
		s.writeError(c, core.Errorf(core.ENOTFOUND, "no such fragment %q", name))
		return
	}
	d, err := s.viewData(pg, c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.render(c, s.ui().sets[pg], name+"-fragment", pageData{Base: s.cfg.BasePath, Page: pg, Clock: s.clockState(s.cfg.Clock.Now()), Query: c.Request.URL.Query(), Data: d})
}

func (s *Server) render(c *gin.Context, t *template.Template, name string, d pageData) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, d); err != nil {
		s.writePageError(c, core.Errorf(core.EINTERNAL, "rendering %s: %v", name, err))
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "text/html; charset=utf-8", b.Bytes())
}

// writePageError answers a page request that failed with a small page
// saying why (a JSON error for the fragments, which scripts read).
func (s *Server) writePageError(c *gin.Context, err error) {
	status := httpStatus(core.ErrorCode(err))
	if status == http.StatusInternalServerError {
		s.log.Error("dashboard page error", "path", c.Request.URL.Path, "err", err)
	}
	msg := core.ErrorMessage(err)
	c.Data(status, "text/html; charset=utf-8", []byte(`<!doctype html><meta charset="utf-8"><title>lapse</title>`+
		`<link rel="stylesheet" href="`+s.cfg.BasePath+`/static/app.css"><main class="page"><h1>`+http.StatusText(status)+`</h1><p class="error">`+
		template.HTMLEscapeString(msg)+`</p><p><a href="`+s.cfg.BasePath+`/">Back to the overview</a></p></main>`))
}

// timeOf reads a time.Time or *time.Time of a template; ok is false for
// none or the zero time.
func timeOf(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case *time.Time:
		if t != nil {
			return *t, !t.IsZero()
		}
	}
	return time.Time{}, false
}

// formatTime writes a time for people, in UTC to the millisecond; "" for
// none.
func formatTime(v any) string {
	if t, ok := timeOf(v); ok {
		return t.UTC().Format("2006-01-02 15:04:05.000")
	}
	return ""
}

// isoTime writes a time for scripts (data-due attributes); "" for none.
func isoTime(v any) string {
	if t, ok := timeOf(v); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return ""
}

// entityURL is the entity page's address.
func entityURL(protocol, name string) string {
	return "entity?protocol=" + url.QueryEscape(protocol) + "&name=" + url.QueryEscape(name)
}

// apiEntity is the control API's address of an entity,
// /api/entities/{protocol}/{name}, each part of the name escaped.
func apiEntity(protocol, name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "api/entities/" + url.PathEscape(protocol) + "/" + strings.Join(parts, "/")
}

// protocolTitle is a protocol's name for people; a protocol the dashboard
// does not know shows as it is named, so a new front-end appears unchanged.
func protocolTitle(p string) string {
	switch p {
	case core.ServiceBus:
		return "Azure Service Bus"
	case core.RabbitMQ:
		return "RabbitMQ"
	case core.Cosmos:
		return "Azure Cosmos DB"
	}
	return p
}

// protocolOrder sorts the protocols this way, others after by name.
var protocolOrder = map[string]int{core.ServiceBus: 1, core.RabbitMQ: 2, core.Cosmos: 3}

func sortProtocols(ps []string) {
	sort.Slice(ps, func(i, j int) bool {
		oi, oj := protocolOrder[ps[i]], protocolOrder[ps[j]]
		if oi == 0 {
			oi = 100
		}
		if oj == 0 {
			oj = 100
		}
		if oi != oj {
			return oi < oj
		}
		return ps[i] < ps[j]
	})
}

// shortName is an entity's name without its parent's, for the indented
// tree of the overview ("orders/Subscriptions/audit" under "orders" shows
// as "Subscriptions/audit").
func shortName(name, parent string) string {
	if parent != "" {
		if rest, ok := strings.CutPrefix(name, parent+"/"); ok && rest != "" {
			return rest
		}
	}
	return name
}

func formatBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// plainText strips the tags of a rule text, for title attributes.
func plainText(h template.HTML) string {
	s := strings.NewReplacer("<code>", "", "</code>", "").Replace(string(h))
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&#34;", `"`, "&#39;", "'").Replace(s)
}

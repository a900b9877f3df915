package atom

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// Handler serves the ATOM management API the Service Bus administration
// clients call (Go's admin.Client, .NET's ServiceBusAdministrationClient,
// JS's ServiceBusAdministrationClient) over a Backend:
//
//	GET    /health                                  200, as the official emulator
//	GET    /$namespaceinfo
//	GET    /$Resources/Queues, /$Resources/Topics   feeds, $skip and $top
//	PUT    /{queue-or-topic}                        the body's description says which
//	GET    /{queue-or-topic}, DELETE
//	GET    /{topic}/Subscriptions                   feed
//	PUT    /{topic}/Subscriptions/{sub}, GET, DELETE
//	GET    /{topic}/Subscriptions/{sub}/Rules       feed
//	PUT    /{topic}/Subscriptions/{sub}/Rules/{rule}, GET, DELETE
//
// A PUT without If-Match creates (201), with If-Match updates (200).
// "Subscriptions" and "Rules" match in any case; unknown query parameters
// (api-version, the Go client's stray "?") are ignored. Queue and topic
// names may contain slashes.
type Handler struct {
	// Now gives the time for feeds and error texts; time.Now unless set
	// before the handler serves.
	Now func() time.Time

	b         Backend
	authorize func(*http.Request) error
	log       *slog.Logger
}

// NewHandler returns the handler of b. authorize, if not nil, checks every
// request but GET /health (its error, a *core.Error with code
// core.EUNAUTHORIZED, becomes a 401); log receives a debug line per request
// and the text of internal errors (nil discards).
func NewHandler(b Backend, authorize func(r *http.Request) error, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{Now: time.Now, b: b, authorize: authorize, log: log}
}

// maxBody bounds a PUT's body; descriptions are a few kilobytes.
const maxBody = 1 << 20

// Content types of the replies.
const (
	contentEntry = "application/atom+xml;type=entry;charset=utf-8"
	contentFeed  = "application/atom+xml;type=feed;charset=utf-8"
	contentError = "application/xml; charset=utf-8"
)

// maxTop is the largest page the service returns.
const maxTop = 100

// ServeHTTP serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, ok := parseRoute(r.URL.EscapedPath())
	h.log.Debug("atom request", "method", r.Method, "path", r.URL.Path, "route", rt.kind)
	if !ok {
		h.writeError(w, r, core.Errorf(core.ENOTFOUND, "No service is hosted at the specified address."), "")
		return
	}
	if rt.kind == routeHealth {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.methodNotAllowed(w, r, "GET")
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"status":"healthy","message":"Service is healthy."}`)
		return
	}
	if h.authorize != nil {
		if err := h.authorize(r); err != nil {
			if core.ErrorCode(err) == core.EINTERNAL {
				h.log.Error("atom authorize", "err", err)
			}
			h.writeError(w, r, err, rt.path.String())
			return
		}
	}
	switch rt.kind {
	case routeNamespace:
		if r.Method != http.MethodGet {
			h.methodNotAllowed(w, r, "GET")
			return
		}
		h.getNamespace(w, r)
	case routeList:
		if r.Method != http.MethodGet {
			h.methodNotAllowed(w, r, "GET")
			return
		}
		h.list(w, r, rt)
	case routeEntity:
		switch r.Method {
		case http.MethodGet:
			h.get(w, r, rt.path)
		case http.MethodPut:
			h.put(w, r, rt.path)
		case http.MethodDelete:
			h.delete(w, r, rt.path)
		default:
			h.methodNotAllowed(w, r, "GET, PUT, DELETE")
		}
	}
}

// routeKind says what a URL path names.
type routeKind uint8

const (
	routeHealth routeKind = iota + 1
	routeNamespace
	routeList
	routeEntity
)

// route is a parsed URL path. For routeList, list is the kind listed and
// path the parent; for routeEntity, path is the entity, with Kind 0 for
// "a queue or a topic".
type route struct {
	kind routeKind
	list Kind
	path Path
}

// parseRoute reads an escaped URL path; false for paths the API does not
// serve.
func parseRoute(escaped string) (route, bool) {
	var segs []string
	for s := range strings.SplitSeq(strings.Trim(escaped, "/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return route{}, false
		}
		segs = append(segs, u)
	}
	if len(segs) == 0 {
		return route{}, false
	}
	first := segs[0]
	switch {
	case len(segs) == 1 && strings.EqualFold(first, "health"):
		return route{kind: routeHealth}, true
	case len(segs) == 1 && strings.EqualFold(first, "$namespaceinfo"):
		return route{kind: routeNamespace}, true
	case len(segs) == 2 && strings.EqualFold(first, "$Resources") && strings.EqualFold(segs[1], "Queues"):
		return route{kind: routeList, list: KindQueue}, true
	case len(segs) == 2 && strings.EqualFold(first, "$Resources") && strings.EqualFold(segs[1], "Topics"):
		return route{kind: routeList, list: KindTopic}, true
	case strings.HasPrefix(first, "$"):
		return route{}, false
	}
	i := 1
	for i < len(segs) && !strings.EqualFold(segs[i], "Subscriptions") {
		i++
	}
	topic := strings.Join(segs[:i], "/")
	rest := segs[min(i+1, len(segs)):]
	switch {
	case i == len(segs):
		return route{kind: routeEntity, path: Path{Entity: topic}}, true
	case len(rest) == 0:
		return route{kind: routeList, list: KindSubscription, path: Path{Kind: KindTopic, Entity: topic}}, true
	case len(rest) == 1:
		return route{kind: routeEntity, path: Path{Kind: KindSubscription, Entity: topic, Subscription: rest[0]}}, true
	case !strings.EqualFold(rest[1], "Rules"):
		return route{}, false
	case len(rest) == 2:
		return route{kind: routeList, list: KindRule, path: Path{Kind: KindSubscription, Entity: topic, Subscription: rest[0]}}, true
	case len(rest) == 3:
		return route{kind: routeEntity, path: Path{Kind: KindRule, Entity: topic, Subscription: rest[0], Rule: rest[2]}}, true
	}
	return route{}, false
}

// getNamespace serves GET /$namespaceinfo.
func (h *Handler) getNamespace(w http.ResponseWriter, r *http.Request) {
	ni := h.b.NamespaceInfo()
	var b xmlBuf
	writeEntry(&b, entryHead{
		id: h.url(r, "$namespaceinfo"), title: ni.Name, author: ni.Name,
		published: ni.CreatedAt, updated: ni.ModifiedAt,
	}, false, func(b *xmlBuf) { writeNamespaceInfo(b, ni) })
	h.write(w, http.StatusOK, contentEntry, b.Bytes())
}

// get serves the GET of an entity; a name alone is a queue if there is
// one, else a topic.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, p Path) {
	var e Entry
	var err error
	if p.Kind == 0 {
		e, err = h.b.Get(Path{Kind: KindQueue, Entity: p.Entity})
		if core.ErrorCode(err) == core.ENOTFOUND {
			var terr error
			if e, terr = h.b.Get(Path{Kind: KindTopic, Entity: p.Entity}); core.ErrorCode(terr) != core.ENOTFOUND {
				err = terr
			}
		}
	} else {
		e, err = h.b.Get(p)
	}
	if err != nil {
		h.writeError(w, r, err, p.String())
		return
	}
	h.writeEntry(w, r, http.StatusOK, e)
}

// put serves a PUT: create, or update with If-Match.
func (h *Handler) put(w http.ResponseWriter, r *http.Request, p Path) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.writeError(w, r, invalid("The request body is larger than %d bytes.", maxBody), p.String())
			return
		}
		h.writeError(w, r, invalid("The request body could not be read."), p.String())
		return
	}
	e, err := DecodeEntry(data)
	if err != nil {
		h.writeError(w, r, err, p.String())
		return
	}
	want := p.Kind
	if want == 0 && (e.Path.Kind == KindQueue || e.Path.Kind == KindTopic) {
		want = e.Path.Kind
	}
	if e.Path.Kind != want {
		h.writeError(w, r, invalid("A %sDescription cannot be put at '%s'.", e.Path.Kind, p), p.String())
		return
	}
	p.Kind = want
	e.Path = p
	if e.Rule != nil {
		e.Rule.Name = p.Rule
	}
	update := r.Header.Get("If-Match") != ""
	stored, err := h.b.Put(e, update)
	if err != nil {
		h.writeError(w, r, err, p.String())
		return
	}
	status := http.StatusCreated
	if update {
		status = http.StatusOK
	}
	h.writeEntry(w, r, status, stored)
}

// delete serves a DELETE; a name alone is a queue if there is one, else a
// topic.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, p Path) {
	var err error
	if p.Kind == 0 {
		err = h.b.Delete(Path{Kind: KindQueue, Entity: p.Entity})
		if core.ErrorCode(err) == core.ENOTFOUND {
			if terr := h.b.Delete(Path{Kind: KindTopic, Entity: p.Entity}); core.ErrorCode(terr) != core.ENOTFOUND {
				err = terr
			}
		}
	} else {
		err = h.b.Delete(p)
	}
	if err != nil {
		h.writeError(w, r, err, p.String())
		return
	}
	w.WriteHeader(http.StatusOK)
}

// list serves a feed.
func (h *Handler) list(w http.ResponseWriter, r *http.Request, rt route) {
	q := r.URL.Query()
	skip, top := 0, maxTop
	for _, f := range []struct {
		name string
		to   *int
	}{{"$skip", &skip}, {"$top", &top}} {
		s := q.Get(f.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			h.writeError(w, r, invalid("The value '%s' of the query parameter '%s' is not valid.", s, f.name), "")
			return
		}
		*f.to = n
	}
	top = min(top, maxTop)
	// One more than the page tells whether a next page has any.
	entries, err := h.b.List(rt.list, rt.path, skip, top+1)
	if err != nil {
		h.writeError(w, r, err, rt.path.String())
		return
	}
	more := top > 0 && len(entries) > top
	entries = entries[:min(len(entries), top)]
	var title, self string
	switch rt.list {
	case KindQueue:
		title, self = "Queues", "$Resources/Queues"
	case KindTopic:
		title, self = "Topics", "$Resources/Topics"
	case KindSubscription:
		title, self = "Subscriptions", rt.path.Entity+"/Subscriptions"
	case KindRule:
		title, self = "Rules", rt.path.String()+"/Rules"
	}
	author := h.b.NamespaceInfo().Name
	selfURL := h.url(r, self)
	var b xmlBuf
	b.open("feed", "xmlns", nsAtom)
	b.open("title", "type", "text")
	b.escape(title, false)
	b.close("title")
	b.elem("id", selfURL)
	b.elem("updated", atomTime(h.Now()))
	b.empty("link", "rel", "self", "href", selfURL)
	if more {
		// As the service does: azure-servicebus for Python reads the next
		// page only from this link, its $skip and $top (issue 27).
		b.empty("link", "rel", "next", "href", h.pageURL(r, self, skip+top, top))
	}
	for _, e := range entries {
		writeEntry(&b, h.head(r, e, author), true, func(b *xmlBuf) { writeDescription(b, e) })
	}
	b.close("feed")
	h.write(w, http.StatusOK, contentFeed, b.Bytes())
}

// writeEntry writes one entity's entry.
func (h *Handler) writeEntry(w http.ResponseWriter, r *http.Request, status int, e Entry) {
	var b xmlBuf
	writeEntry(&b, h.head(r, e, h.b.NamespaceInfo().Name), false, func(b *xmlBuf) { writeDescription(b, e) })
	h.write(w, status, contentEntry, b.Bytes())
}

// head is an entity's entry head: its URL as id (the JS client reads names
// from it), its name as title (the Go and .NET clients read it there).
func (h *Handler) head(r *http.Request, e Entry, author string) entryHead {
	updated := e.Runtime.UpdatedAt
	if updated.IsZero() {
		updated = e.Runtime.CreatedAt
	}
	return entryHead{
		id: h.url(r, e.Path.String()), title: e.Path.Name(), author: author,
		published: e.Runtime.CreatedAt, updated: updated,
	}
}

// url returns the absolute URL of path on the host the request came to,
// with its api-version if it had one.
func (h *Handler) url(r *http.Request, path string) string {
	u := url.URL{Scheme: "http", Host: r.Host, Path: "/" + path}
	if r.TLS != nil {
		u.Scheme = "https"
	}
	if v := r.URL.Query().Get("api-version"); v != "" {
		u.RawQuery = url.Values{"api-version": {v}}.Encode()
	}
	return u.String()
}

// pageURL is the URL of the page of the feed at path that skips skip
// entries and holds at most top, with the request's api-version; its query
// is the service's: %24skip=2&%24top=2&api-version=2017-04.
func (h *Handler) pageURL(r *http.Request, path string, skip, top int) string {
	u, _ := url.Parse(h.url(r, path))
	q := u.Query()
	q.Set("$skip", strconv.Itoa(skip))
	q.Set("$top", strconv.Itoa(top))
	u.RawQuery = q.Encode()
	return u.String()
}

// write writes a reply.
func (h *Handler) write(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	w.Write(body)
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	h.writeStatus(w, r, http.StatusMethodNotAllowed, "The requested HTTP method is not supported for this resource.", "")
}

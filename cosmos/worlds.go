package cosmos

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Sandboxes share the default world's Cosmos DB port (docs/architecture.md,
// "Sandboxes"). Each has its own Server, with an account key of its own,
// and a request goes to the world whose key signed it. A signature does
// not show its key, so the port tries keys (findWorld):
//   - the worlds the connection's last requests went to, the latest first;
//   - then the default world;
//   - then the worlds the port found last, the latest first;
//   - then every sandbox, until one signs it.
//
// The SDKs keep their connections, and a test run uses few sandboxes at a
// time however many are alive, so a request costs one or two signature
// checks. A request no world signs is the default world's, which refuses
// it as today. With no sandbox, a request costs what it did before.

// connWorld is what a connection's requests share: the worlds its last
// signed requests went to, the latest first. One process's clients of
// several worlds may share connections (azcosmos clients share Go's
// default transport), so a connection remembers a few.
type connWorld struct {
	mu     sync.Mutex
	recent recentWorlds
}

// recentWorlds are the last worlds found, the latest first.
type recentWorlds struct {
	w []*Server
}

// maxConnWorlds and maxRecentWorlds are how many worlds a connection and
// the port remember.
const (
	maxConnWorlds   = 8
	maxRecentWorlds = 64
)

// note puts x first, keeping at most max.
func (r *recentWorlds) note(x *Server, max int) {
	if i := slices.Index(r.w, x); i >= 0 {
		r.w = slices.Delete(r.w, i, i+1)
	}
	r.w = slices.Insert(r.w, 0, x)
	if len(r.w) > max {
		r.w = r.w[:max]
	}
}

// snapshot returns a copy of the list.
func (r *recentWorlds) snapshot() []*Server { return slices.Clone(r.w) }

type connWorldKey struct{}

// signedKey marks a request whose signature the port checked: by which
// world, over which payload. That world's authorize does not check it again.
type signedKey struct{}

type signed struct {
	by      *Server
	payload string
}

// withConnWorld gives a connection's requests their connWorld
// (httpserver.Server.SetConnContext).
func withConnWorld(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connWorldKey{}, &connWorld{})
}

// route hands each request to the world whose key signed it, h being the
// default world's (s's) routes. It is the default world's only.
func (s *Server) route(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Worlds == nil {
			h.ServeHTTP(w, r)
			return
		}
		worlds := s.cfg.Worlds()
		if len(worlds) == 0 {
			h.ServeHTTP(w, r)
			return
		}
		auth := rqAuthorization.ofRequest(r)
		if auth == "" {
			h.ServeHTTP(w, r)
			return
		}
		to, payload := s.findWorld(r, auth, worlds)
		if to == nil {
			h.ServeHTTP(w, r)
			return
		}
		if payload != "" {
			r = r.WithContext(context.WithValue(r.Context(), signedKey{}, signed{by: to, payload: payload}))
		}
		if to == s {
			h.ServeHTTP(w, r)
			return
		}
		if to.cfg.Used != nil {
			to.cfg.Used()
		}
		to.handler()
		to.routed.ServeHTTP(w, r)
	})
}

// findWorld returns the world whose key signed the request, and the
// payload it signed (none for a resource token), or nil. It tries the
// worlds the connection's last requests went to, then the default world,
// then those the port found last, then every world, and remembers the one
// found; a deleted world is never found.
func (s *Server) findWorld(r *http.Request, auth string, worlds []*Server) (*Server, string) {
	signs := signer(r, auth)
	tried := map[*Server]bool{}
	try := func(x *Server) (string, bool) {
		if tried[x] || x.closed.Load() {
			return "", false
		}
		tried[x] = true
		return signs(x)
	}
	cw, _ := r.Context().Value(connWorldKey{}).(*connWorld)
	var first []*Server
	if cw != nil {
		cw.mu.Lock()
		first = cw.recent.snapshot()
		cw.mu.Unlock()
	}
	first = append(first, s)
	s.recentMu.Lock()
	first = append(first, s.recent.snapshot()...)
	s.recentMu.Unlock()
	for _, list := range [][]*Server{first, worlds} {
		for _, x := range list {
			if p, ok := try(x); ok {
				if cw != nil {
					cw.mu.Lock()
					cw.recent.note(x, maxConnWorlds)
					cw.mu.Unlock()
				}
				if x != s {
					s.recentMu.Lock()
					s.recent.note(x, maxRecentWorlds)
					s.recentMu.Unlock()
				}
				return x, p
			}
		}
	}
	return nil, ""
}

// checkedSignature reports whether the port checked, with s's key, that the
// request's master signature signs payload.
func (s *Server) checkedSignature(r *http.Request, payload []byte) bool {
	v, ok := r.Context().Value(signedKey{}).(signed)
	return ok && v.by == s && v.payload == string(payload)
}

// signer returns whether a world's key signed the request whose
// Authorization header is auth, and over which payload: a resource token
// is its own claims signed with the account key (no payload); a master
// token signs a payload of masterPayloads.
func signer(r *http.Request, auth string) func(*Server) (string, bool) {
	text := authText(nil, auth)
	if strings.HasPrefix(auth, "type=resource") || strings.HasPrefix(auth, "type%3Dresource") {
		return func(x *Server) (string, bool) {
			_, _, valid := x.readToken(text)
			return "", valid
		}
	}
	payloads := masterPayloads(r)
	return func(x *Server) (string, bool) {
		for _, p := range payloads {
			if p != "" && x.signatureOK(text, []byte(p)) {
				return p, true
			}
		}
		return "", false
	}
}

// masterPayloads are the strings a master token may sign for r, read from
// its path as resourceOf reads them from its route: the verb, the resource
// type, the resource link and the date. A path ending in a resource's id
// is that resource; one ending in a type is the feed of its parent. A path
// whose database segment reads as a _rid may be rid-based, whose link is
// the last _rid, lower-cased (namePath): then both are tried.
func masterPayloads(r *http.Request) [2]string {
	date := rqMsDate.ofRequest(r)
	if date == "" {
		date = rqDate.ofRequest(r)
	}
	typ, link, ridLink := resourceOfPath(r.URL.EscapedPath())
	out := [2]string{string(appendPayload(nil, r.Method, typ, link, date))}
	if ridLink != "" {
		out[1] = string(appendPayload(nil, r.Method, typ, ridLink, date))
	}
	return out
}

// resourceOfPath returns the resource type and link of an escaped path,
// and its link as a rid-based path if it may be one.
func resourceOfPath(p string) (typ, link, ridLink string) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", "", ""
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if u, err := url.PathUnescape(seg); err == nil {
			segs[i] = u
		}
	}
	n := len(segs)
	last := n - 1 // the segment naming the resource
	switch {
	case n >= 2 && segs[n-2] == "operations":
		typ, last = "colls", n-3
	case n%2 == 1:
		typ, last = segs[n-1], n-2
	default:
		typ = segs[n-2]
	}
	if last < 0 {
		return typ, "", ""
	}
	link = strings.Join(segs[:last+1], "/")
	if segs[0] == "offers" {
		link = strings.ToLower(segs[last])
	}
	if segs[0] == "dbs" && n >= 2 {
		if _, ok := parseRID(segs[1], 4); ok {
			ridLink = strings.ToLower(segs[last])
		}
	}
	return typ, link, ridLink
}

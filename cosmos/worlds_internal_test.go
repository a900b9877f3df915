package cosmos

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// issue 29.2. A sandbox's request is routed by a signature checked over
// the payload read from its path (resourceOfPath), before any route
// matched; its world's authorize then checks the payload its route gives
// (resourceOf). The two agree on every route the server has, so that no
// call of a sandbox's client is refused where the default world's is
// served: a route added later is checked here too.
func TestResourceOfPathAgreesWithRoutes(t *testing.T) {
	s, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.handler()
	g := gin.New()
	g.UseRawPath, g.UnescapePathValues = true, false
	var typ, link string
	for _, rt := range s.gin.Routes() {
		g.Handle(rt.Method, rt.Path, func(c *gin.Context) { typ, link = resourceOf(c) })
	}
	n := 0
	for _, rt := range s.gin.Routes() {
		if rt.Path == "/_explorer/emulator.pem" {
			continue
		}
		// Each parameter gets a value of its own, one of them escaped.
		path := rt.Path
		for i, seg := range strings.Split(rt.Path, "/") {
			if strings.HasPrefix(seg, ":") {
				path = strings.Replace(path, seg, "v"+string(rune('a'+i))+"%20x", 1)
			}
		}
		typ, link = "?", "?"
		g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(rt.Method, path, nil))
		gotTyp, gotLink, _ := resourceOfPath(path)
		if gotTyp != typ || gotLink != link {
			t.Errorf("%s %s: the path reads as (%q, %q), the route as (%q, %q)", rt.Method, path, gotTyp, gotLink, typ, link)
		}
		n++
	}
	if n < 40 {
		t.Fatalf("only %d routes checked", n)
	}
}

// issue 29.2. A rid-based path is signed for its last _rid, lower-cased,
// as namePath reads it; both forms are tried.
func TestResourceOfPathRIDBased(t *testing.T) {
	for _, c := range []struct{ path, typ, rid string }{
		{"/dbs/AAAAAA==/colls", "colls", "aaaaaa=="},
		{"/dbs/AAAAAA==/colls/AAAAAAAAAAA=/docs", "docs", "aaaaaaaaaaa="},
		{"/dbs/AAAAAA==/colls/AAAAAAAAAAA=/pkranges", "pkranges", "aaaaaaaaaaa="},
	} {
		typ, _, rid := resourceOfPath(c.path)
		if typ != c.typ || rid != c.rid {
			t.Errorf("%s: (%q, %q), want (%q, %q)", c.path, typ, rid, c.typ, c.rid)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/dbs/AAAAAA==/colls", nil)
	if p := masterPayloads(r); p[1] == "" || p[0] == p[1] {
		t.Fatalf("payloads %q", p)
	}
}

package cosmos_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lapse-emulator/lapse/core"
)

// Users, permissions and resource tokens over REST: azcosmos cannot sign
// with a resource token, so these tests send the requests themselves.

// mustOK fails the test unless r has status want, and decodes its body.
func mustOK(tb testing.TB, what string, r restResponse, want int) map[string]any {
	tb.Helper()
	if r.status != want {
		tb.Fatalf("%s: %d, want %d: %s", what, r.status, want, r.body)
	}
	var m map[string]any
	if len(r.body) > 0 {
		if err := json.Unmarshal(r.body, &m); err != nil {
			tb.Fatalf("%s: %v: %s", what, err, r.body)
		}
	}
	return m
}

// withToken sends a request signed with a resource token, URL-encoded as
// the SDKs send it.
func (f *fixture) withToken(token, verb, path string, body []byte, headers map[string]string) restResponse {
	f.tb.Helper()
	h := map[string]string{"Authorization": url.QueryEscape(token)}
	for k, v := range headers {
		h[k] = v
	}
	return f.doWith("", time.Now(), verb, path, "", "", body, h)
}

// mustPermission creates permission id of user u in database db, with
// extra headers, and returns its _token.
func (f *fixture) mustPermission(db, u, id, mode, resource string, pk []any, headers map[string]string) string {
	f.tb.Helper()
	p := map[string]any{"id": id, "permissionMode": mode, "resource": resource}
	if pk != nil {
		p["resourcePartitionKey"] = pk
	}
	b, _ := json.Marshal(p)
	m := mustOK(f.tb, "create permission "+id, f.do("POST", "/dbs/"+db+"/users/"+u+"/permissions", "permissions", "dbs/"+db+"/users/"+u, b, headers), http.StatusCreated)
	token, _ := m["_token"].(string)
	if !strings.HasPrefix(token, "type=resource&ver=1.0&sig=") {
		f.tb.Fatalf("permission %s: _token %q", id, token)
	}
	return token
}

// mustUser creates user u in database db.
func (f *fixture) mustUser(db, u string) map[string]any {
	f.tb.Helper()
	return mustOK(f.tb, "create user "+u, f.do("POST", "/dbs/"+db+"/users", "users", "dbs/"+db, []byte(`{"id":"`+u+`"}`), nil), http.StatusCreated)
}

func TestUsersAndPermissionsCRUD(t *testing.T) {
	f := MustServer(t)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)

	u := f.mustUser("db", "alice")
	for _, p := range []string{"_rid", "_self", "_etag", "_ts", "_permissions"} {
		if _, ok := u[p]; !ok {
			t.Errorf("user has no %s: %v", p, u)
		}
	}
	if u["_permissions"] != "permissions/" || !strings.HasPrefix(u["_self"].(string), "dbs/") {
		t.Errorf("user links: %v", u)
	}
	mustOK(t, "duplicate user", f.do("POST", "/dbs/db/users", "users", "dbs/db", []byte(`{"id":"alice"}`), nil), http.StatusConflict)
	mustOK(t, "user of no database", f.do("POST", "/dbs/none/users", "users", "dbs/none", []byte(`{"id":"x"}`), nil), http.StatusNotFound)
	if got := mustOK(t, "read user", f.do("GET", "/dbs/db/users/alice", "users", "dbs/db/users/alice", nil, nil), 200); got["_rid"] != u["_rid"] {
		t.Errorf("read user: %v", got)
	}
	upsert := map[string]string{"x-ms-documentdb-is-upsert": "true"}
	mustOK(t, "upsert existing user", f.do("POST", "/dbs/db/users", "users", "dbs/db", []byte(`{"id":"alice"}`), upsert), http.StatusOK)
	mustOK(t, "upsert new user", f.do("POST", "/dbs/db/users", "users", "dbs/db", []byte(`{"id":"bob"}`), upsert), http.StatusCreated)
	list := mustOK(t, "list users", f.do("GET", "/dbs/db/users", "users", "dbs/db", nil, nil), 200)
	if d := cmp.Diff([]string{"alice", "bob"}, feedIDsOf(list, "Users")); d != "" {
		t.Errorf("users (-want +got):\n%s", d)
	}
	q := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"}
	qr := mustOK(t, "query users", f.do("POST", "/dbs/db/users", "users", "dbs/db", []byte(`{"query":"SELECT * FROM r WHERE r.id = 'bob'"}`), q), 200)
	if d := cmp.Diff([]string{"bob"}, feedIDsOf(qr, "Users")); d != "" {
		t.Errorf("query users (-want +got):\n%s", d)
	}

	// Permissions, each with the _token the service hands out.
	f.mustPermission("db", "alice", "read-c", "Read", "dbs/db/colls/c", nil, nil)
	mustOK(t, "duplicate permission", f.do("POST", "/dbs/db/users/alice/permissions", "permissions", "dbs/db/users/alice",
		[]byte(`{"id":"read-c","permissionMode":"Read","resource":"dbs/db/colls/c"}`), nil), http.StatusConflict)
	for _, bad := range []string{`"dbs/db"`, `"colls/c"`, `"dbs/db/colls/c/docs"`, `"dbs/db/colls/c/nothing/x"`} {
		mustOK(t, "permission on "+bad, f.do("POST", "/dbs/db/users/alice/permissions", "permissions", "dbs/db/users/alice",
			[]byte(`{"id":"bad","permissionMode":"Read","resource":`+bad+`}`), nil), http.StatusBadRequest)
	}
	mustOK(t, "permission without mode", f.do("POST", "/dbs/db/users/alice/permissions", "permissions", "dbs/db/users/alice",
		[]byte(`{"id":"bad","resource":"dbs/db/colls/c"}`), nil), http.StatusBadRequest)
	// A resource by _rid need not exist, as the service takes it.
	f.mustPermission("db", "alice", "by-rid", "All", "dbs/AQAAAA==/colls/AQAAAJ0fgTc=", nil, nil)
	p := mustOK(t, "read permission", f.do("GET", "/dbs/db/users/alice/permissions/read-c", "permissions", "dbs/db/users/alice/permissions/read-c", nil, nil), 200)
	if p["permissionMode"] != "Read" || p["resource"] != "dbs/db/colls/c" || p["_token"] == nil || p["_rid"] == nil {
		t.Errorf("read permission: %v", p)
	}
	pl := mustOK(t, "list permissions", f.do("GET", "/dbs/db/users/alice/permissions", "permissions", "dbs/db/users/alice", nil, nil), 200)
	if d := cmp.Diff([]string{"by-rid", "read-c"}, feedIDsOf(pl, "Permissions"), cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
		t.Errorf("permissions (-want +got):\n%s", d)
	}
	for _, row := range pl["Permissions"].([]any) {
		if row.(map[string]any)["_token"] == nil {
			t.Errorf("listed permission without _token: %v", row)
		}
	}
	// Replace under another id renames it, and keeps its _rid.
	rp := mustOK(t, "replace permission", f.do("PUT", "/dbs/db/users/alice/permissions/read-c", "permissions", "dbs/db/users/alice/permissions/read-c",
		[]byte(`{"id":"all-c","permissionMode":"All","resource":"dbs/db/colls/c"}`), nil), 200)
	if rp["_rid"] != p["_rid"] || rp["permissionMode"] != "All" || rp["_token"] == nil {
		t.Errorf("replaced permission: %v (was %v)", rp, p)
	}
	mustOK(t, "read renamed permission", f.do("GET", "/dbs/db/users/alice/permissions/read-c", "permissions", "dbs/db/users/alice/permissions/read-c", nil, nil), 404)
	// A user renamed keeps its permissions.
	mustOK(t, "rename user", f.do("PUT", "/dbs/db/users/alice", "users", "dbs/db/users/alice", []byte(`{"id":"carol"}`), nil), 200)
	mustOK(t, "read renamed user", f.do("GET", "/dbs/db/users/alice", "users", "dbs/db/users/alice", nil, nil), 404)
	mustOK(t, "permission of renamed user", f.do("GET", "/dbs/db/users/carol/permissions/all-c", "permissions", "dbs/db/users/carol/permissions/all-c", nil, nil), 200)
	mustOK(t, "delete permission", f.do("DELETE", "/dbs/db/users/carol/permissions/all-c", "permissions", "dbs/db/users/carol/permissions/all-c", nil, nil), 204)
	mustOK(t, "read deleted permission", f.do("GET", "/dbs/db/users/carol/permissions/all-c", "permissions", "dbs/db/users/carol/permissions/all-c", nil, nil), 404)
	mustOK(t, "delete user", f.do("DELETE", "/dbs/db/users/carol", "users", "dbs/db/users/carol", nil, nil), 204)
	mustOK(t, "permission of deleted user", f.do("GET", "/dbs/db/users/carol/permissions/by-rid", "permissions", "dbs/db/users/carol/permissions/by-rid", nil, nil), 404)

	// Users and permissions go with their database.
	f.mustPermission("db", "bob", "p", "Read", "dbs/db/colls/c", nil, nil)
	mustOK(t, "delete database", f.do("DELETE", "/dbs/db", "dbs", "dbs/db", nil, nil), 204)
	f.MustDatabase("db")
	mustOK(t, "user of a database made again", f.do("GET", "/dbs/db/users/bob", "users", "dbs/db/users/bob", nil, nil), 404)
	for _, in := range f.e.Entities(f.clock.Now(), core.Cosmos) {
		if in.Kind == "user" || in.Kind == "permission" {
			t.Errorf("left after its database: %v", in.EntityKey)
		}
	}
}

// feedIDsOf returns the ids of a feed's rows under field.
func feedIDsOf(m map[string]any, field string) []string {
	var ids []string
	rows, _ := m[field].([]any)
	for _, r := range rows {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}

func TestResourceTokenScope(t *testing.T) {
	f := MustServer(t)
	db := f.MustDatabase("db")
	c := f.MustContainer(db, "c", "/pk", nil)
	f.MustContainer(db, "other", "/pk", nil)
	f.MustCreate(c, "a", map[string]any{"id": "x", "pk": "a"})
	f.MustCreate(c, "b", map[string]any{"id": "y", "pk": "b"})
	f.mustUser("db", "u")
	read := f.mustPermission("db", "u", "read", "Read", "dbs/db/colls/c", nil, nil)
	allA := f.mustPermission("db", "u", "all-a", "All", "/dbs/db/colls/c/", []any{"a"}, nil)
	item := f.mustPermission("db", "u", "item", "All", "dbs/db/colls/c/docs/x", nil, nil)
	cRID := mustOK(t, "read c", f.do("GET", "/dbs/db/colls/c", "colls", "dbs/db/colls/c", nil, nil), 200)["_rid"].(string)
	dbRID := mustOK(t, "read db", f.do("GET", "/dbs/db", "dbs", "dbs/db", nil, nil), 200)["_rid"].(string)
	byRID := f.mustPermission("db", "u", "by-rid", "Read", "dbs/"+dbRID+"/colls/"+cRID, nil, nil)

	pk := func(v string) map[string]string {
		return map[string]string{"x-ms-documentdb-partitionkey": `["` + v + `"]`}
	}
	query := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json", "x-ms-documentdb-query-enablecrosspartition": "true"}
	create := func(id, p string) []byte { return []byte(`{"id":"` + id + `","pk":"` + p + `"}`) }
	for _, tc := range []struct {
		name, token, verb, path string
		body                    []byte
		headers                 map[string]string
		want                    int
	}{
		{"ReadAccount", read, "GET", "/", nil, nil, 200},
		{"ReadDatabase", read, "GET", "/dbs/db", nil, nil, 200},
		{"ReadContainer", read, "GET", "/dbs/db/colls/c", nil, nil, 200},
		{"ReadRanges", read, "GET", "/dbs/db/colls/c/pkranges", nil, nil, 200},
		{"ReadItem", read, "GET", "/dbs/db/colls/c/docs/x", nil, pk("a"), 200},
		{"ReadFeed", read, "GET", "/dbs/db/colls/c/docs", nil, nil, 200},
		{"Query", read, "POST", "/dbs/db/colls/c/docs", []byte(`{"query":"SELECT * FROM c"}`), query, 200},
		{"ReadCannotCreate", read, "POST", "/dbs/db/colls/c/docs", create("z", "a"), pk("a"), 403},
		{"ReadCannotDelete", read, "DELETE", "/dbs/db/colls/c/docs/x", nil, pk("a"), 403},
		{"ReadNotOtherContainer", read, "GET", "/dbs/db/colls/other/docs", nil, nil, 403},
		{"NoDatabaseList", read, "GET", "/dbs", nil, nil, 403},
		{"NoContainerCreate", read, "POST", "/dbs/db/colls", []byte(`{"id":"n","partitionKey":{"paths":["/pk"]}}`), nil, 403},
		{"NoContainerDelete", allA, "DELETE", "/dbs/db/colls/c", nil, nil, 403},
		{"NoUsers", allA, "GET", "/dbs/db/users", nil, nil, 403},
		{"AllCreatesInItsKey", allA, "POST", "/dbs/db/colls/c/docs", create("z", "a"), pk("a"), 201},
		{"AllReplacesInItsKey", allA, "PUT", "/dbs/db/colls/c/docs/x", create("x", "a"), pk("a"), 200},
		{"AllNotOtherKey", allA, "POST", "/dbs/db/colls/c/docs", create("w", "b"), pk("b"), 403},
		{"AllNotOtherKeyRead", allA, "GET", "/dbs/db/colls/c/docs/y", nil, pk("b"), 403},
		{"AllNotCrossPartitionQuery", allA, "POST", "/dbs/db/colls/c/docs", []byte(`{"query":"SELECT * FROM c"}`), query, 403},
		{"ItemReadsIt", item, "GET", "/dbs/db/colls/c/docs/x", nil, pk("a"), 200},
		{"ItemNotAnother", item, "GET", "/dbs/db/colls/c/docs/y", nil, pk("b"), 403},
		{"ItemNotFeed", item, "GET", "/dbs/db/colls/c/docs", nil, nil, 403},
		{"ByRIDReads", byRID, "GET", "/dbs/db/colls/c/docs/x", nil, pk("a"), 200},
		{"ByRIDNotOther", byRID, "GET", "/dbs/db/colls/other/docs", nil, nil, 403},
		{"Forged", strings.Replace(read, "sig=", "sig=A", 1), "GET", "/dbs/db/colls/c/docs/x", nil, pk("a"), 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.withToken(tc.token, tc.verb, tc.path, tc.body, tc.headers)
			if r.status != tc.want {
				t.Fatalf("%s %s: %d, want %d: %s", tc.verb, tc.path, r.status, tc.want, r.body)
			}
			if tc.want == 403 && !strings.Contains(string(r.body), "Insufficient permissions provided in the authorization header") {
				t.Errorf("refusal: %s", r.body)
			}
		})
	}
	// A deleted permission's tokens no longer serve.
	mustOK(t, "delete permission", f.do("DELETE", "/dbs/db/users/u/permissions/read", "permissions", "dbs/db/users/u/permissions/read", nil, nil), 204)
	mustOK(t, "token of a deleted permission", f.withToken(read, "GET", "/dbs/db/colls/c/docs/x", nil, pk("a")), 401)
}

// TestResourceTokenExpires_CO8: a token lasts x-ms-documentdb-expiry-seconds
// from when it was issued, on lapse's clock; then it is refused as the
// service refuses an expired token, and its expiry is an event of rule
// CO-8 (EM-2).
func TestResourceTokenExpires_CO8(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "a", map[string]any{"id": "x", "pk": "a"})
	f.mustUser("db", "u")
	issued := f.clock.Now()
	short := f.mustPermission("db", "u", "p", "Read", "dbs/db/colls/c", nil, map[string]string{"x-ms-documentdb-expiry-seconds": "600"})
	long := mustOK(t, "read permission", f.do("GET", "/dbs/db/users/u/permissions/p", "permissions", "dbs/db/users/u/permissions/p", nil, nil), 200)["_token"].(string)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`}
	readItem := func(token string) restResponse { return f.withToken(token, "GET", "/dbs/db/colls/c/docs/x", nil, pk) }

	f.advance(599 * time.Second)
	mustOK(t, "short token at 599 s", readItem(short), 200)
	f.advance(time.Second)
	r := readItem(short)
	mustOK(t, "short token at 600 s", r, 403)
	if !strings.Contains(string(r.body), "The authorization token is not valid at the current time. Please create another token and retry") ||
		!strings.Contains(string(r.body), "token expiry time: "+issued.Add(600*time.Second).Format(http.TimeFormat)) {
		t.Errorf("expired token: %s", r.body)
	}
	var ev *core.Event
	for _, e := range f.e.Events(core.EventQuery{Protocol: core.Cosmos}) {
		if e.Rule == "CO-8" {
			ev = &e
		}
	}
	if ev == nil || ev.Entity != "db/users/u/permissions/p" || !ev.Due.Equal(issued.Add(600*time.Second)) || ev.Time.Before(ev.Due) || ev.Action != core.ActionExpired {
		t.Fatalf("CO-8 event: %+v", ev)
	}
	// The default is an hour.
	f.advance(3600*time.Second - 601*time.Second)
	mustOK(t, "default token at 3599 s", readItem(long), 200)
	f.advance(time.Second)
	mustOK(t, "default token at 3600 s", readItem(long), 403)
}

func TestTokenLifeBound_CO8(t *testing.T) {
	f := MustServer(t)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.mustUser("db", "u")
	f.mustPermission("db", "u", "p", "Read", "dbs/db/colls/c", nil, map[string]string{"x-ms-documentdb-expiry-seconds": "18000"})
	for _, v := range []string{"18001", "0", "-5", "ten"} {
		r := f.do("GET", "/dbs/db/users/u/permissions/p", "permissions", "dbs/db/users/u/permissions/p", nil, map[string]string{"x-ms-documentdb-expiry-seconds": v})
		mustOK(t, "expiry "+v, r, 400)
		if !strings.Contains(string(r.body), "Value '"+v+"' specified for the header 'x-ms-documentdb-expiry-seconds' is invalid.") {
			t.Errorf("expiry %s: %s", v, r.body)
		}
	}
	b := []byte(`{"id":"q","permissionMode":"Read","resource":"dbs/db/colls/c"}`)
	mustOK(t, "create with 18001", f.do("POST", "/dbs/db/users/u/permissions", "permissions", "dbs/db/users/u", b, map[string]string{"x-ms-documentdb-expiry-seconds": "18001"}), 400)
}

func TestRestartKeepsUsersPermissionsAndTokens(t *testing.T) {
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "a", map[string]any{"id": "x", "pk": "a"})
	f.mustUser("db", "u")
	token := f.mustPermission("db", "u", "p", "All", "dbs/db/colls/c", nil, map[string]string{"x-ms-documentdb-expiry-seconds": "1200"})
	issued := f.clock.Now()

	g := MustServerOn(t, f.store, f.clock.Now())
	mustOK(t, "user after restart", g.do("GET", "/dbs/db/users/u", "users", "dbs/db/users/u", nil, nil), 200)
	mustOK(t, "permission after restart", g.do("GET", "/dbs/db/users/u/permissions/p", "permissions", "dbs/db/users/u/permissions/p", nil, nil), 200)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`}
	mustOK(t, "token after restart", g.withToken(token, "GET", "/dbs/db/colls/c/docs/x", nil, pk), 200)
	mustOK(t, "write after restart", g.withToken(token, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"y","pk":"a"}`), pk), 201)
	g.advance(1200 * time.Second)
	mustOK(t, "token expired after restart", g.withToken(token, "GET", "/dbs/db/colls/c/docs/x", nil, pk), 403)
	found := false
	for _, e := range g.e.Events(core.EventQuery{Protocol: core.Cosmos}) {
		found = found || e.Rule == "CO-8" && e.Due.Equal(issued.Add(1200*time.Second))
	}
	if !found {
		t.Error("no CO-8 event for the token after the restart")
	}
}

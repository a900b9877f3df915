package cosmos_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// wireResponse is an answer as read off the connection: its header names
// exactly as they were written.
type wireResponse struct {
	status int
	names  []string
	// header holds the values by the names as written.
	header map[string]string
	body   []byte
}

// raw sends one request over a new TCP connection, signed with the
// emulator key for resourceType and resourceLink unless resourceType is
// "-", and reads the answer without any client's header handling. path is
// sent as it is, "//dbs" included; headers["Host"] replaces the server's
// address as the Host header.
func (f *fixture) raw(verb, path, resourceType, resourceLink string, body []byte, headers map[string]string) wireResponse {
	f.tb.Helper()
	conn, err := net.DialTimeout("tcp", f.s.Addr().String(), 10*time.Second)
	if err != nil {
		f.tb.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	date := time.Now().UTC().Format(http.TimeFormat)
	var req bytes.Buffer
	host := f.s.Addr().String()
	if h, ok := headers["Host"]; ok {
		host = h
	}
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nx-ms-date: %s\r\nx-ms-version: 2018-09-17\r\nContent-Length: %d\r\n",
		verb, path, host, date, len(body))
	if resourceType != "-" {
		fmt.Fprintf(&req, "Authorization: %s\r\n", sign(cosmos.EmulatorKey, verb, resourceType, resourceLink, date))
	}
	for k, v := range headers {
		if k != "Host" {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v)
		}
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		f.tb.Fatal(err)
	}
	r := textproto.NewReader(bufio.NewReader(conn))
	line, err := r.ReadLine()
	if err != nil {
		f.tb.Fatal(err)
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if proto != "HTTP/1.1" || err != nil {
		f.tb.Fatalf("status line %q", line)
	}
	out := wireResponse{status: status, header: map[string]string{}}
	for {
		line, err := r.ReadLine()
		if err != nil {
			f.tb.Fatal(err)
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			f.tb.Fatalf("header line %q", line)
		}
		out.names = append(out.names, name)
		out.header[name] = strings.TrimSpace(value)
	}
	if out.body, err = io.ReadAll(r.R); err != nil {
		f.tb.Fatal(err)
	}
	return out
}

func TestDoubledSlashPathsReachTheirResources(t *testing.T) {
	// issue 13.9: azure-cosmos 3.x joins the account endpoint, which ends
	// in '/', with paths that start with '/'; the service takes them, and
	// the signature is of the resource link as for one slash.
	f := MustServer(t)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`}
	steps := []struct {
		verb, path, typ, link string
		body                  string
		headers               map[string]string
		want                  int
	}{
		{"POST", "//dbs", "dbs", "", `{"id":"db"}`, nil, http.StatusCreated},
		{"GET", "//dbs/db", "dbs", "dbs/db", "", nil, http.StatusOK},
		{"POST", "//dbs/db/colls", "colls", "dbs/db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`, nil, http.StatusCreated},
		{"POST", "//dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"i1","pk":"a"}`, pk, http.StatusCreated},
		{"GET", "//dbs/db/colls/c/docs/i1", "docs", "dbs/db/colls/c/docs/i1", "", pk, http.StatusOK},
		{"POST", "///dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"query":"SELECT * FROM c"}`,
			map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json",
				"x-ms-documentdb-query-enablecrosspartition": "true"}, http.StatusOK},
		{"GET", "//", "", "", "", nil, http.StatusOK},
		// Signed for the raw path rather than the resource link: refused.
		{"GET", "//dbs/db", "dbs", "/dbs/db", "", nil, http.StatusUnauthorized},
		{"DELETE", "//dbs/db/colls/c/docs/i1", "docs", "dbs/db/colls/c/docs/i1", "", pk, http.StatusNoContent},
	}
	for _, s := range steps {
		got := f.raw(s.verb, s.path, s.typ, s.link, []byte(s.body), s.headers)
		if got.status != s.want {
			t.Errorf("%s %s signed for %q: %d, want %d: %s", s.verb, s.path, s.link, got.status, s.want, got.body)
		}
	}
}

// standardNames are the standard headers the service writes in their
// canonical case; it writes every other name in lower case.
var standardNames = map[string]bool{"Content-Type": true, "Content-Length": true, "Date": true,
	"Transfer-Encoding": true, "Connection": true, "Cache-Control": true, "Pragma": true, "Server": true,
	"Strict-Transport-Security": true, "Content-Location": true, "Location": true, "Set-Cookie": true, "Allow": true}

func TestResponseHeaderNamesAreWrittenAsTheServiceWritesThem(t *testing.T) {
	// issue 13.10: x-ms-continuation, x-ms-session-token, etag and the
	// other headers of the service go out in lower case, on every route and
	// error path; standard ones (Content-Type, Date) in their usual case.
	// azure-cosmos 3.x reads them from a plain dict.
	f := MustServer(t)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`}
	query := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json",
		"x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-max-item-count": "1"}
	steps := []struct {
		name, verb, path, typ, link, body string
		headers                           map[string]string
		status                            int
		// has are headers the answer must carry, in lower case.
		has []string
	}{
		{"account", "GET", "/", "", "", "", nil, 200, []string{"x-ms-request-charge", "x-ms-activity-id"}},
		{"create database", "POST", "/dbs", "dbs", "", `{"id":"db"}`, nil, 201, []string{"etag", "x-ms-request-charge"}},
		{"create container", "POST", "/dbs/db/colls", "colls", "dbs/db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`, nil, 201, []string{"etag"}},
		{"create item", "POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"i1","pk":"a"}`, pk, 201, []string{"etag", "x-ms-session-token"}},
		{"create item 2", "POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"i2","pk":"a"}`, pk, 201, []string{"etag", "x-ms-session-token"}},
		{"read item", "GET", "/dbs/db/colls/c/docs/i1", "docs", "dbs/db/colls/c/docs/i1", "", pk, 200, []string{"etag", "x-ms-session-token"}},
		{"query page", "POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"query":"SELECT * FROM c"}`, query, 200,
			[]string{"x-ms-continuation", "x-ms-item-count", "x-ms-documentdb-query-metrics"}},
		{"read feed", "GET", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", "", map[string]string{"x-ms-max-item-count": "1"}, 200,
			[]string{"x-ms-continuation", "x-ms-item-count"}},
		{"conflict", "POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"id":"i1","pk":"a"}`, pk, 409, []string{"x-ms-activity-id"}},
		{"item not found", "GET", "/dbs/db/colls/c/docs/nope", "docs", "dbs/db/colls/c/docs/nope", "", pk, 404, []string{"x-ms-request-charge"}},
		{"bad query", "POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", `{"query":"SELEC"}`, query, 400, []string{"x-ms-activity-id"}},
		{"unauthorized", "GET", "/dbs/db", "-", "", "", nil, 401, []string{"x-ms-activity-id"}},
		{"no route", "GET", "/nothing/here", "", "", "", nil, 404, []string{"x-ms-activity-id"}},
		{"no method", "PATCH", "/dbs", "dbs", "", "", nil, 405, []string{"x-ms-activity-id"}},
		{"certificate", "GET", "/_explorer/emulator.pem", "-", "", "", nil, 200, nil},
	}
	// Each answer has an activity ID of its own, a GUID as the service's.
	guid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	activities := map[string]string{}
	for _, s := range steps {
		got := f.raw(s.verb, s.path, s.typ, s.link, []byte(s.body), s.headers)
		if got.status != s.status {
			t.Errorf("%s: %d, want %d: %s", s.name, got.status, s.status, got.body)
		}
		if id := got.header["x-ms-activity-id"]; !guid.MatchString(id) || activities[id] != "" {
			t.Errorf("%s: activity ID %q, want a GUID that no other answer had (%v)", s.name, id, activities)
		} else {
			activities[id] = s.name
		}
		for _, n := range got.names {
			if !standardNames[n] && n != strings.ToLower(n) {
				t.Errorf("%s: header %q is not in lower case (headers %q)", s.name, n, got.names)
			}
		}
		for _, n := range s.has {
			if _, ok := got.header[n]; !ok {
				t.Errorf("%s: no %q header among %q", s.name, n, got.names)
			}
		}
		if _, ok := got.header["Content-Type"]; !ok && len(got.body) > 0 {
			t.Errorf("%s: a body without Content-Type (headers %q)", s.name, got.names)
		}
	}
}

func TestResourceIDLinksAddressDatabasesAndContainers(t *testing.T) {
	// issue 13 (the azure-cosmos 3.x quickstart): programs of that SDK pass
	// a resource's _self link, "dbs/<_rid>/colls/<_rid>/", as the parent of
	// what they create; such a request is signed for the last _rid, lower
	// case.
	f := MustServer(t)
	var db, coll struct {
		RID  string `json:"_rid"`
		Self string `json:"_self"`
	}
	got := f.raw("POST", "/dbs", "dbs", "", []byte(`{"id":"db"}`), nil)
	if got.status != http.StatusCreated || json.Unmarshal(got.body, &db) != nil || db.Self != "dbs/"+db.RID+"/" {
		t.Fatalf("create database: %d %s", got.status, got.body)
	}
	dbLink := strings.ToLower(db.RID)
	got = f.raw("POST", "//"+db.Self+"colls/", "colls", dbLink, []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`), nil)
	if got.status != http.StatusCreated || json.Unmarshal(got.body, &coll) != nil || coll.Self != db.Self+"colls/"+coll.RID+"/" {
		t.Fatalf("create container under %s: %d %s", db.Self, got.status, got.body)
	}
	collLink := strings.ToLower(coll.RID)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`}
	steps := []struct {
		verb, path, typ, link, body string
		want                        int
	}{
		{"GET", "/" + db.Self, "dbs", dbLink, "", http.StatusOK},
		{"GET", "/" + coll.Self, "colls", collLink, "", http.StatusOK},
		{"POST", "/" + coll.Self + "docs", "docs", collLink, `{"id":"i1","pk":"a"}`, http.StatusCreated},
		{"GET", "/dbs/db/colls/c/docs/i1", "docs", "dbs/db/colls/c/docs/i1", "", http.StatusOK},
		// The name-based link does not sign a rid-based request.
		{"GET", "/" + coll.Self, "colls", "dbs/db/colls/c", "", http.StatusUnauthorized},
		// A container _rid of another database is no container of this one.
		{"GET", "/" + db.Self + "colls/AAAAAAAAAAA=", "colls", "aaaaaaaaaaa=", "", http.StatusNotFound},
	}
	for _, s := range steps {
		got := f.raw(s.verb, s.path, s.typ, s.link, []byte(s.body), pk)
		if got.status != s.want {
			t.Errorf("%s %s signed for %q: %d, want %d: %s", s.verb, s.path, s.link, got.status, s.want, got.body)
		}
	}
	// An id that reads as a _rid but is no resource's stays an id.
	if got := f.raw("POST", "/dbs", "dbs", "", []byte(`{"id":"AAAAAA=="}`), nil); got.status != http.StatusCreated {
		t.Fatalf("create database AAAAAA==: %d %s", got.status, got.body)
	}
	if got := f.raw("GET", "/dbs/AAAAAA==", "dbs", "dbs/AAAAAA==", nil, nil); got.status != http.StatusOK {
		t.Errorf("GET /dbs/AAAAAA== by its id: %d %s", got.status, got.body)
	}
}

func TestResourceIDLinksAddressDocuments(t *testing.T) {
	// issue 26: azure-cosmos 4.x deletes (and reads, replaces) an item
	// given as a dict by its _self, "dbs/<_rid>/colls/<_rid>/docs/<_rid>/",
	// signed for the document's _rid in lower case.
	f := MustServer(t)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["a"]`}
	var doc struct {
		RID  string `json:"_rid"`
		Self string `json:"_self"`
	}
	got := f.raw("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(`{"id":"i 1","pk":"a","v":1}`), pk)
	if got.status != http.StatusCreated || json.Unmarshal(got.body, &doc) != nil {
		t.Fatalf("create: %d %s", got.status, got.body)
	}
	link := strings.ToLower(doc.RID)
	if got := f.raw("GET", "/"+doc.Self, "docs", link, nil, pk); got.status != http.StatusOK || !bytes.Contains(got.body, []byte(`"v":1`)) {
		t.Errorf("GET %s: %d %s", doc.Self, got.status, got.body)
	}
	if got := f.raw("GET", "/"+doc.Self, "docs", "dbs/db/colls/c/docs/i 1", nil, pk); got.status != http.StatusUnauthorized {
		t.Errorf("GET %s signed for its name-based link: %d, want 401", doc.Self, got.status)
	}
	if got := f.raw("DELETE", "/"+doc.Self, "docs", link, nil, pk); got.status != http.StatusNoContent {
		t.Errorf("DELETE %s: %d %s", doc.Self, got.status, got.body)
	}
	if got := f.raw("GET", "/"+doc.Self, "docs", link, nil, pk); got.status != http.StatusNotFound {
		t.Errorf("GET %s after its delete: %d, want 404", doc.Self, got.status)
	}
}

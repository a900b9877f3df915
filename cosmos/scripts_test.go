package cosmos_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/cosmos/script"
)

// scriptBody is a script resource's JSON.
func scriptBody(tb testing.TB, fields map[string]any) []byte {
	tb.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// mustScripts makes database db and container c (partition key /pk) and
// returns the container's link.
func (f *fixture) mustScriptContainer() string {
	f.tb.Helper()
	db := f.MustDatabase("db")
	f.MustContainer(db, "c", "/pk", nil)
	return "dbs/db/colls/c"
}

// mustScript creates a script of kind ("sprocs", ...) in the container.
func (f *fixture) mustScript(kind string, fields map[string]any) {
	f.tb.Helper()
	r := f.do("POST", "/dbs/db/colls/c/"+kind, kind, "dbs/db/colls/c", scriptBody(f.tb, fields), nil)
	if r.status != http.StatusCreated {
		f.tb.Fatalf("create %s: %d %s", kind, r.status, r.body)
	}
}

// execute runs stored procedure id on partition key pk with args.
func (f *fixture) execute(id, pk string, args string, headers map[string]string) restResponse {
	f.tb.Helper()
	h := map[string]string{"x-ms-documentdb-partitionkey": `["` + pk + `"]`}
	for k, v := range headers {
		h[k] = v
	}
	return f.do("POST", "/dbs/db/colls/c/sprocs/"+id, "sprocs", "dbs/db/colls/c/sprocs/"+id, []byte(args), h)
}

func TestScriptResources(t *testing.T) {
	f := MustServer(t)
	f.mustScriptContainer()
	for _, kind := range []string{"sprocs", "triggers", "udfs"} {
		t.Run(kind, func(t *testing.T) {
			fields := map[string]any{"id": "s1", "body": "function () { var x = 10; }"}
			if kind == "triggers" {
				fields["triggerType"], fields["triggerOperation"] = "Pre", "All"
			}
			coll := "dbs/db/colls/c"
			r := f.do("POST", "/"+coll+"/"+kind, kind, coll, scriptBody(t, fields), nil)
			var got map[string]any
			json.Unmarshal(r.body, &got)
			if r.status != http.StatusCreated || got["id"] != "s1" || got["body"] != fields["body"] ||
				got["_rid"] == nil || !strings.Contains(got["_self"].(string), "/"+kind+"/") || got["_etag"] == nil || got["_ts"] == nil {
				t.Fatalf("create: %d %s", r.status, r.body)
			}
			if r := f.do("POST", "/"+coll+"/"+kind, kind, coll, scriptBody(t, fields), nil); r.status != http.StatusConflict {
				t.Errorf("create again: %d, want 409", r.status)
			}
			if r := f.do("GET", "/"+coll+"/"+kind+"/s1", kind, coll+"/"+kind+"/s1", nil, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), "x = 10") {
				t.Errorf("read: %d %s", r.status, r.body)
			}
			fields["body"] = "function () { var x = 20; }"
			r = f.do("PUT", "/"+coll+"/"+kind+"/s1", kind, coll+"/"+kind+"/s1", scriptBody(t, fields), nil)
			if r.status != http.StatusOK || !strings.Contains(string(r.body), "x = 20") {
				t.Errorf("replace: %d %s", r.status, r.body)
			}
			fields["id"] = "s2"
			r = f.do("POST", "/"+coll+"/"+kind, kind, coll, scriptBody(t, fields), map[string]string{"x-ms-documentdb-is-upsert": "true"})
			if r.status != http.StatusCreated {
				t.Errorf("upsert of a new one: %d %s", r.status, r.body)
			}
			r = f.do("POST", "/"+coll+"/"+kind, kind, coll, scriptBody(t, fields), map[string]string{"x-ms-documentdb-is-upsert": "true"})
			if r.status != http.StatusOK {
				t.Errorf("upsert over one: %d %s", r.status, r.body)
			}
			r = f.do("GET", "/"+coll+"/"+kind, kind, coll, nil, nil)
			if r.status != http.StatusOK || strings.Count(string(r.body), `"id":`) != 2 || !strings.Contains(string(r.body), `"_count":2`) {
				t.Errorf("list: %d %s", r.status, r.body)
			}
			q := `{"query":"SELECT * FROM root r WHERE r.id=@id","parameters":[{"name":"@id","value":"s2"}]}`
			r = f.do("POST", "/"+coll+"/"+kind, kind, coll, []byte(q), map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"})
			if r.status != http.StatusOK || !strings.Contains(string(r.body), `"_count":1`) {
				t.Errorf("query: %d %s", r.status, r.body)
			}
			if r := f.do("DELETE", "/"+coll+"/"+kind+"/s1", kind, coll+"/"+kind+"/s1", nil, nil); r.status != http.StatusNoContent {
				t.Errorf("delete: %d %s", r.status, r.body)
			}
			if r := f.do("GET", "/"+coll+"/"+kind+"/s1", kind, coll+"/"+kind+"/s1", nil, nil); r.status != http.StatusNotFound {
				t.Errorf("read after delete: %d, want 404", r.status)
			}
			if r := f.do("DELETE", "/"+coll+"/"+kind+"/s1", kind, coll+"/"+kind+"/s1", nil, nil); r.status != http.StatusNotFound {
				t.Errorf("delete again: %d, want 404", r.status)
			}
		})
	}
	bad := map[string]any{"id": "t", "body": "function () {}", "triggerType": "Sideways", "triggerOperation": "All"}
	if r := f.do("POST", "/dbs/db/colls/c/triggers", "triggers", "dbs/db/colls/c", scriptBody(t, bad), nil); r.status != http.StatusBadRequest {
		t.Errorf("a trigger of no known type: %d, want 400", r.status)
	}
}

func TestScriptsSurviveARestartAndGoWithTheirContainer(t *testing.T) {
	f := MustServer(t)
	f.mustScriptContainer()
	f.mustScript("sprocs", map[string]any{"id": "p", "body": "function () {}"})
	// A replace of the container keeps its scripts.
	r := f.do("PUT", "/dbs/db/colls/c", "colls", "dbs/db/colls/c", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":100}`), nil)
	if r.status != http.StatusOK {
		t.Fatalf("replace container: %d %s", r.status, r.body)
	}
	g := MustServerOn(t, f.store, t0)
	if r := g.do("GET", "/dbs/db/colls/c/sprocs/p", "sprocs", "dbs/db/colls/c/sprocs/p", nil, nil); r.status != http.StatusOK {
		t.Fatalf("read after restart: %d %s", r.status, r.body)
	}
	if r := g.do("DELETE", "/dbs/db/colls/c", "colls", "dbs/db/colls/c", nil, nil); r.status != http.StatusNoContent {
		t.Fatal(r.status)
	}
	gdb, err := g.client.NewDatabase("db")
	if err != nil {
		t.Fatal(err)
	}
	g.MustContainer(gdb, "c", "/pk", nil)
	if r := g.do("GET", "/dbs/db/colls/c/sprocs/p", "sprocs", "dbs/db/colls/c/sprocs/p", nil, nil); r.status != http.StatusNotFound {
		t.Errorf("a new container of the same name has the old one's sproc: %d", r.status)
	}
}

func TestStoredProcedureIsOneTransaction(t *testing.T) {
	f := MustServer(t)
	f.mustScriptContainer()
	f.mustScript("sprocs", map[string]any{"id": "two", "body": `function (fail) {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: 'a', pk: 'p', n: 1}, function (err, doc) {
			if (err) throw err;
			c.readDocument(c.getAltLink() + '/docs/a', function (err, again) {
				if (err) throw err;
				again.n = 2;
				c.replaceDocument(again._self, again, function (err) {
					if (err) throw err;
					c.createDocument(c.getSelfLink(), {id: 'b', pk: 'p'});
					c.queryDocuments(c.getSelfLink(), {query: 'SELECT VALUE r.id FROM r WHERE r.n = @n', parameters: [{name: '@n', value: 2}]}, function (err, ids) {
						if (err) throw err;
						console.log('ids %j', ids);
						if (fail) throw new Error('asked to fail');
						getContext().getResponse().setBody(ids);
					});
				});
			});
		});
	}`})
	r := f.execute("two", "p", `[true]`, nil)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "Encountered exception while executing function. Exception = Error: asked to fail") {
		t.Fatalf("a throwing sproc: %d %s", r.status, r.body)
	}
	for _, id := range []string{"a", "b"} {
		if r := f.do("GET", "/dbs/db/colls/c/docs/"+id, "docs", "dbs/db/colls/c/docs/"+id, nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}); r.status != http.StatusNotFound {
			t.Errorf("%s after a sproc that threw: %d, want 404", id, r.status)
		}
	}
	r = f.execute("two", "p", `[false]`, map[string]string{"x-ms-documentdb-script-enable-logging": "true"})
	if r.status != http.StatusOK || string(r.body) != `["a"]` {
		t.Fatalf("execute: %d %s (reads its own writes: the replaced a)", r.status, r.body)
	}
	if got := r.header.Get("x-ms-documentdb-script-log-results"); got != "ids%20%5B%22a%22%5D" {
		t.Errorf("log header %q", got)
	}
	if r.header.Get("x-ms-session-token") == "" {
		t.Error("no session token")
	}
	if r := f.do("GET", "/dbs/db/colls/c/docs/b", "docs", "dbs/db/colls/c/docs/b", nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}); r.status != http.StatusOK {
		t.Errorf("b after the sproc: %d", r.status)
	}
	// An unhandled operation error stops it with that operation's status.
	r = f.execute("two", "p", `[false]`, nil)
	if r.status != http.StatusConflict {
		t.Errorf("a create of an existing id: %d %s, want 409", r.status, r.body)
	}
	// A document of another partition key is the service's 400.
	f.mustScript("sprocs", map[string]any{"id": "other", "body": `function () {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: 'x', pk: 'q'}, function (err) { if (err) throw new Error(err.message); });
	}`})
	if r := f.execute("other", "p", `[]`, nil); r.status != http.StatusBadRequest {
		t.Errorf("a create in another partition: %d %s, want 400", r.status, r.body)
	}
	if r := f.execute("missing", "p", `[]`, nil); r.status != http.StatusNotFound {
		t.Errorf("an unknown sproc: %d, want 404", r.status)
	}
}

func TestStoredProcedureTimeBound(t *testing.T) {
	f := MustServerWith(t, func(c *cosmos.Config) { c.ScriptLimits = script.Limits{Time: 300 * time.Millisecond} })
	f.mustScriptContainer()
	f.mustScript("sprocs", map[string]any{"id": "loop", "body": `function () {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: 'a', pk: 'p'});
		while (true) {}
	}`})
	start := time.Now()
	r := f.execute("loop", "p", `[]`, nil)
	if r.status != http.StatusRequestTimeout || !strings.Contains(string(r.body), "The requested operation exceeded maximum alloted time.") {
		t.Fatalf("an endless sproc: %d %s, want the service's 408", r.status, r.body)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("it answered after %v", took)
	}
	// The server goes on serving, the container too, and nothing was written.
	if r := f.do("GET", "/dbs/db/colls/c/docs/a", "docs", "dbs/db/colls/c/docs/a", nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}); r.status != http.StatusNotFound {
		t.Errorf("the stopped sproc's write: %d, want 404", r.status)
	}
	f.mustScript("sprocs", map[string]any{"id": "ok", "body": `function () { getContext().getResponse().setBody('fine'); }`})
	if r := f.execute("ok", "p", `[]`, nil); r.status != http.StatusOK || string(r.body) != `"fine"` {
		t.Errorf("after the timeout: %d %s", r.status, r.body)
	}
}

func TestTriggers(t *testing.T) {
	f := MustServer(t)
	f.mustScriptContainer()
	f.mustScript("triggers", map[string]any{"id": "upper", "triggerType": "Pre", "triggerOperation": "All", "body": `function () {
		var r = getContext().getRequest(), item = r.getBody();
		item.id = item.id.toUpperCase();
		item.op = r.getOperationType();
		r.setBody(item);
	}`})
	f.mustScript("triggers", map[string]any{"id": "audit", "triggerType": "Post", "triggerOperation": "Create", "body": `function () {
		var c = getContext().getCollection(), doc = getContext().getResponse().getBody();
		c.createDocument(c.getSelfLink(), {id: 'audit-' + doc.id, pk: doc.pk}, function (err) { if (err) throw err; });
	}`})
	f.mustScript("triggers", map[string]any{"id": "refuse", "triggerType": "Post", "triggerOperation": "All", "body": `function () {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: 'never', pk: 'p'});
		throw new Error('refused');
	}`})
	create := func(doc string, h map[string]string) restResponse {
		h["x-ms-documentdb-partitionkey"] = `["p"]`
		return f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(doc), h)
	}
	get := func(id string) int {
		return f.do("GET", "/dbs/db/colls/c/docs/"+id, "docs", "dbs/db/colls/c/docs/"+id, nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}).status
	}
	r := create(`{"id":"doc1","pk":"p"}`, map[string]string{"x-ms-documentdb-pre-trigger-include": "upper", "x-ms-documentdb-post-trigger-include": "audit"})
	var got map[string]any
	json.Unmarshal(r.body, &got)
	if r.status != http.StatusCreated || got["id"] != "DOC1" || got["op"] != "Create" {
		t.Fatalf("create with a pre-trigger: %d %s", r.status, r.body)
	}
	if st := get("audit-DOC1"); st != http.StatusOK {
		t.Errorf("the post-trigger's document: %d", st)
	}
	r = create(`{"id":"doc2","pk":"p"}`, map[string]string{"x-ms-documentdb-post-trigger-include": "refuse"})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "Exception = Error: refused") {
		t.Errorf("a throwing post-trigger: %d %s", r.status, r.body)
	}
	for _, id := range []string{"doc2", "never"} {
		if st := get(id); st != http.StatusNotFound {
			t.Errorf("%s after a throwing trigger: %d, want 404", id, st)
		}
	}
	// A trigger of the wrong type or operation is a 400.
	if r := create(`{"id":"doc3","pk":"p"}`, map[string]string{"x-ms-documentdb-pre-trigger-include": "audit"}); r.status != http.StatusBadRequest {
		t.Errorf("a post-trigger as a pre-trigger: %d", r.status)
	}
	r = f.do("DELETE", "/dbs/db/colls/c/docs/DOC1", "docs", "dbs/db/colls/c/docs/DOC1", nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-post-trigger-include": "audit"})
	if r.status != http.StatusBadRequest {
		t.Errorf("a create trigger on a delete: %d", r.status)
	}
	r = f.do("PUT", "/dbs/db/colls/c/docs/DOC1", "docs", "dbs/db/colls/c/docs/DOC1", []byte(`{"id":"doc1","pk":"p","v":2}`), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-pre-trigger-include": "upper"})
	json.Unmarshal(r.body, &got)
	if r.status != http.StatusOK || got["id"] != "DOC1" || got["op"] != "Replace" || got["v"] != 2.0 {
		t.Errorf("replace with a pre-trigger: %d %s", r.status, r.body)
	}
	r = f.do("DELETE", "/dbs/db/colls/c/docs/DOC1", "docs", "dbs/db/colls/c/docs/DOC1", nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-post-trigger-include": "refuse"})
	if r.status != http.StatusBadRequest || get("DOC1") != http.StatusOK {
		t.Errorf("a delete whose trigger throws: %d, the item %d", r.status, get("DOC1"))
	}
}

func TestUserDefinedFunctionsInAQuery(t *testing.T) {
	f := MustServer(t)
	f.mustScriptContainer()
	f.mustScript("udfs", map[string]any{"id": "tax", "body": `function (income) { return income > 1000 ? income * 0.2 : income * 0.1; }`})
	f.mustScript("udfs", map[string]any{"id": "bad", "body": `function () { throw new Error('no tax today'); }`})
	for i, income := range []int{500, 2000} {
		doc := `{"id":"` + string(rune('a'+i)) + `","pk":"p","income":` + jsonNumber(income) + `}`
		if r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(doc), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}); r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
	}
	query := func(q string) restResponse {
		return f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(`{"query":`+strconvQuote(q)+`}`), map[string]string{
			"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json", "x-ms-documentdb-partitionkey": `["p"]`})
	}
	r := query("SELECT VALUE udf.tax(c.income) FROM c WHERE udf.tax(c.income) > 10")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"Documents":[50,400]`) {
		t.Errorf("udf.tax: %d %s", r.status, r.body)
	}
	if r := query("SELECT VALUE udf.nope(c.income) FROM c"); r.status != http.StatusBadRequest {
		t.Errorf("an unknown udf: %d %s", r.status, r.body)
	}
	if r := query("SELECT VALUE udf.bad() FROM c"); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "no tax today") {
		t.Errorf("a throwing udf: %d %s", r.status, r.body)
	}
}

func jsonNumber(n int) string { b, _ := json.Marshal(n); return string(b) }

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// A container's unique keys hold for what its scripts write (issue 28.3):
// a stored procedure whose writes break one is refused as a whole with
// the service's 409, and so is an item's create whose post-trigger writes
// a duplicate; what does not break it is stored.
func TestScriptsKeepUniqueKeys(t *testing.T) {
	f := MustServer(t)
	f.mustUniqueContainer(f.MustDatabase("db"), "c", nil, []string{"/email"})
	f.mustScript("sprocs", map[string]any{"id": "pair", "body": `function (a, b) {
		var c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: 'x', pk: 'p', email: a});
		c.createDocument(c.getSelfLink(), {id: 'y', pk: 'p', email: b});
	}`})
	f.mustScript("triggers", map[string]any{"id": "copy", "triggerType": "Post", "triggerOperation": "Create", "body": `function () {
		var doc = getContext().getResponse().getBody();
		var c = getContext().getCollection();
		if (!c.createDocument(c.getSelfLink(), {id: doc.id + '-copy', pk: doc.pk, email: doc.email})) throw new Error('not accepted');
	}`})
	read := func(id string) int {
		return f.do("GET", "/dbs/db/colls/c/docs/"+id, "docs", "dbs/db/colls/c/docs/"+id, nil,
			map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}).status
	}
	if r := f.execute("pair", "p", `["same@x", "same@x"]`, nil); r.status != http.StatusConflict ||
		!strings.Contains(string(r.body), "Unique index constraint violation.") {
		t.Fatalf("a sproc writing one email twice: %d %s, want 409", r.status, r.body)
	}
	if read("x") != http.StatusNotFound || read("y") != http.StatusNotFound {
		t.Fatal("the refused sproc stored a document")
	}
	if r := f.execute("pair", "p", `["one@x", "two@x"]`, nil); r.status != http.StatusOK {
		t.Fatalf("a sproc writing two emails: %d %s", r.status, r.body)
	}
	h := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-post-trigger-include": "copy"}
	r := f.do("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(`{"id":"z","pk":"p","email":"three@x"}`), h)
	if r.status != http.StatusConflict {
		t.Fatalf("a create whose post-trigger copies its email: %d %s, want 409", r.status, r.body)
	}
	if read("z") != http.StatusNotFound || read("z-copy") != http.StatusNotFound {
		t.Fatal("the refused create stored a document")
	}
}

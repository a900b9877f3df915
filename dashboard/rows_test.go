package dashboard

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// row returns the overview row of entity protocol:name in page, "" when
// the page has none.
func row(page, protocol, name string) string {
	i := strings.Index(page, `data-entity="`+protocol+":"+name+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</tr>")
	return page[i : i+j]
}

// cell returns the text of the first cell of class class in a row.
func cell(r, class string) (string, bool) {
	m := regexp.MustCompile(`<td class="num ` + class + `[^"]*">(.*?)</td>`).FindStringSubmatch(r)
	if m == nil {
		return "", false
	}
	return regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], ""), true
}

// issue 15.12: "dead-lettered" means the items dead-lettered out of an
// entity since it was created or lapse started (stats.deadLettered) in
// every protocol's row and card; the messages now in a Service Bus
// entity's dead-letter queue are counts.inDeadLetterQueue, a column and a
// card of their own.
func TestDeadLetteredMeansTheSameInEveryRow(t *testing.T) {
	f := MustFixture(t)
	q := core.EntityKey{Protocol: core.ServiceBus, Name: "q"}
	dlq := core.EntityKey{Protocol: core.ServiceBus, Name: "q/$DeadLetterQueue"}
	f.engine.Register(core.ServiceBus, core.ProtocolHooks{DeadLetter: func(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
		tx.Enqueue(dlq, it)
	}})
	f.MustCreate(t, core.Entity{EntityKey: q, Kind: "queue", DeadLetterQueue: dlq.Name})
	f.MustCreate(t, core.Entity{EntityKey: dlq, Kind: "deadletterqueue", Parent: q.Name})
	rb := core.EntityKey{Protocol: core.RabbitMQ, Name: "/jobs"}
	f.MustCreate(t, core.Entity{EntityKey: rb, Kind: "queue"})
	for _, k := range []core.EntityKey{q, q, rb} {
		it := f.MustEnqueue(t, k, core.Item{Body: []byte("x")})
		if _, err := f.engine.DeadLetter(t0, k, it.Seq, core.DeadLetterReason{Code: "rejected"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, found, _, _ := f.engine.Take(t0, dlq); !found { // one dead letter handled
		t.Fatal("no dead letter")
	}

	f.check(t, call{"GET", "/api/entities?protocol=servicebus", "", 200, `[
	 {"protocol":"servicebus","name":"q","kind":"queue","deadLetterQueue":"q/$DeadLetterQueue","durable":false,"created":"2026-01-02T03:04:05Z",
	  "policy":{"defaultTtl":"none","maxTtl":"none","ignoreItemTtl":false,"base":"enqueue","onExpire":"drop","retroactive":false,"headOnly":false,"idleTtl":"none","idleUses":[],"idleOnlyWithoutConsumers":false,"rules":{}},
	  "counts":{"active":0,"scheduled":0,"locked":0,"deferred":0,"inDeadLetterQueue":1,"activeBytes":0},
	  "stats":{"received":2,"delivered":0,"expired":0,"deadLettered":2},
	  "consumers":0,"lastUsed":"2026-01-02T03:04:05Z"},
	 {"protocol":"servicebus","name":"q/$DeadLetterQueue","kind":"deadletterqueue","parent":"q","durable":false,"created":"2026-01-02T03:04:05Z",
	  "policy":{"defaultTtl":"none","maxTtl":"none","ignoreItemTtl":false,"base":"enqueue","onExpire":"drop","retroactive":false,"headOnly":false,"idleTtl":"none","idleUses":[],"idleOnlyWithoutConsumers":false,"rules":{}},
	  "counts":{"active":1,"scheduled":0,"locked":0,"deferred":0,"inDeadLetterQueue":0,"activeBytes":1},
	  "stats":{"received":2,"delivered":1,"expired":0,"deadLettered":0},
	  "consumers":0,"lastUsed":"2026-01-02T03:04:05Z"}]`})

	page := f.mustPage(t, "/", ">In DLQ now</th>", ">Dead-lettered since start</th>")
	for _, c := range []struct {
		protocol, name, class string
		want                  string // "" for no such cell
	}{
		{core.ServiceBus, "q", "in-dlq", "1"},
		{core.ServiceBus, "q", "dead-lettered", "2"},
		{core.ServiceBus, "q/$DeadLetterQueue", "in-dlq", "—"},
		{core.RabbitMQ, "/jobs", "in-dlq", ""},
		{core.RabbitMQ, "/jobs", "dead-lettered", "1"},
	} {
		r := row(page, c.protocol, c.name)
		if r == "" {
			t.Fatalf("no row of %s %s", c.protocol, c.name)
		}
		got, ok := cell(r, c.class)
		if c.want == "" && ok {
			t.Errorf("%s %s has a %s cell: %q", c.protocol, c.name, c.class, got)
		} else if c.want != "" && got != c.want {
			t.Errorf("%s %s: %s cell %q, want %q", c.protocol, c.name, c.class, got, c.want)
		}
	}
	f.mustPage(t, "/entity?protocol=servicebus&name=q", `<span class="n">1</span> <a href="entity?protocol=servicebus&amp;name=q%2F%24DeadLetterQueue">in dead-letter queue now</a>`,
		`<span class="n">2</span> dead-lettered since start`, "2 received · 0 delivered · 0 expired · 2 dead-lettered")
	body := f.mustPage(t, "/entity?protocol=rabbitmq&name=/jobs", `<span class="n">1</span> dead-lettered since start`)
	if strings.Contains(body, "in dead-letter queue now") {
		t.Error("a RabbitMQ queue's page counts a dead-letter queue it does not have")
	}
}

// cosmosContainer creates a Cosmos DB container whose policy is what
// adapters.CosmosContainerPolicy makes of defaultTtl: absent (nil), -1 or
// seconds.
func cosmosContainer(t *testing.T, f *fixture, name string, defaultTTL *int) core.EntityKey {
	t.Helper()
	p := core.Policy{Base: core.FromModified, BaseResolution: time.Second, Retroactive: true}
	var settings []core.Setting
	switch {
	case defaultTTL == nil:
		p.IgnoreItemTTL = true
		p.Rules = core.RuleIDs{Never: "CO-2", Expire: "CO-6"}
	case *defaultTTL == -1:
		p.DefaultTTL = core.Forever
		p.Rules = core.RuleIDs{ItemTTL: "CO-3", DefaultTTL: "CO-3", Never: "CO-3", Expire: "CO-6"}
		settings = []core.Setting{{Key: "defaultTtl", Value: "-1"}}
	default:
		p.DefaultTTL = core.After(time.Duration(*defaultTTL) * time.Second)
		p.Rules = core.RuleIDs{ItemTTL: "CO-4", DefaultTTL: "CO-4", Never: "CO-4", Expire: "CO-6"}
	}
	k := core.EntityKey{Protocol: core.Cosmos, Name: "shop/" + name}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "container", Parent: "shop", Policy: p, Settings: settings})
	return k
}

// issue 15.13: a Cosmos DB container's row and page speak Cosmos DB: items,
// no scheduled, locked, deferred, dead-letter or consumer figures; "no TTL"
// only for a container without defaultTtl, and -1 says that only items
// with a ttl of their own expire; an item's document is pretty-printed
// whole, its system properties apart, each whole.
func TestCosmosContainerSpeaksCosmos(t *testing.T) {
	f := MustFixture(t)
	f.MustCreate(t, core.Entity{EntityKey: core.EntityKey{Protocol: core.Cosmos, Name: "shop"}, Kind: "database"})
	minus1, hour := -1, 3600
	cosmosContainer(t, f, "off", nil)
	k := cosmosContainer(t, f, "minus", &minus1)
	cosmosContainer(t, f, "hour", &hour)
	long := strings.Repeat("a line long enough to push the system properties past the preview ", 4)
	doc := `{"id":"cart-1","userId":"u1","items":[{"sku":"A-1","qty":2}],"note":"` + long + `","ttl":600,` +
		`"_rid":"k6EV-QsyIuQBAAAAAAAAAA==","_self":"dbs/k6EV-Q==/colls/k6EV-QsyIuQ=/docs/k6EV-QsyIuQBAAAAAAAAAA==/",` +
		`"_etag":"\"9624fc62-d2f2-0000-b4fd-000000000006\"","_attachments":"attachments/","_ts":1767323045}`
	f.MustEnqueue(t, k, core.Item{Key: `["u1"]cart-1`, Group: `["u1"]`, Body: []byte(doc), TTL: core.After(10 * time.Minute)})

	page := f.mustPage(t, "/")
	i := strings.Index(page, `id="proto-cosmos"`)
	if i < 0 {
		t.Fatal("no Cosmos DB section")
	}
	section := page[i:]
	section = section[:strings.Index(section, "</section>")]
	for _, no := range []string{">Scheduled<", ">Locked<", ">Deferred<", "In DLQ", "Dead-lettered", "Active", "Unacked"} {
		if strings.Contains(section, no) {
			t.Errorf("the Cosmos DB section has %q", no)
		}
	}
	if !strings.Contains(section, `<th class="num">Items</th>`) {
		t.Error("the Cosmos DB section counts no items")
	}
	for name, want := range map[string]string{
		"shop/off":   `<td class="policy-short">no TTL`,
		"shop/minus": `<td class="policy-short">no default TTL: only items with a TTL of their own expire`,
		"shop/hour":  `<td class="policy-short">TTL 1h`,
	} {
		if r := row(page, core.Cosmos, name); !strings.Contains(r, want) {
			t.Errorf("row of %s: no %q in\n%s", name, want, r)
		}
	}

	body := f.mustPage(t, "/entity?protocol=cosmos&name=shop/minus",
		`<span class="n">1</span> items`, "1 written · 0 expired", `<th>Document</th>`,
		"<pre class=\"doc\">{\n  &#34;id&#34;: &#34;cart-1&#34;,\n  &#34;userId&#34;: &#34;u1&#34;,\n  &#34;items&#34;: [\n    {\n      &#34;sku&#34;: &#34;A-1&#34;,",
		"  &#34;ttl&#34;: 600\n}</pre>",
		`<tr><th>_self</th><td><code>dbs/k6EV-Q==/colls/k6EV-QsyIuQ=/docs/k6EV-QsyIuQBAAAAAAAAAA==/</code></td></tr>`,
		`<tr><th>_etag</th><td><code>&#34;9624fc62-d2f2-0000-b4fd-000000000006&#34;</code></td></tr>`,
		`<tr><th>_attachments</th><td><code>attachments/</code></td></tr>`,
		`<tr><th>_ts</th><td><code>1767323045 (2026-01-02 03:04:05 UTC)</code></td></tr>`,
		`<code>cart-1</code>`, "partition [&#34;u1&#34;]")
	for _, no := range []string{"scheduled</div>", "locked</div>", "deferred</div>", "dead-lettered", "<th>consumers</th>", "delivered", `class="state s-`} {
		if strings.Contains(body, no) {
			t.Errorf("the container's page has %q", no)
		}
	}
	if _, pre, ok := strings.Cut(body, `<pre class="doc">`); !ok {
		t.Error("no document")
	} else if doc, _, _ := strings.Cut(pre, "</pre>"); strings.Contains(doc, "_rid") {
		t.Error("the document shows the system properties inside it")
	}
}

// issue 15.14: the overview folds the broker's own entities away (the
// default vhost and the amq.* exchanges of every vhost) behind a link that
// shows them; and the clock box is wide enough for its placeholder.
func TestOverviewFoldsBrokerBuiltinsAndClockBoxFitsItsPlaceholder(t *testing.T) {
	f := MustFixture(t)
	builtins := []string{"vhost:/", "exchange:/amq.direct", "exchange:dev/amq.topic"}
	mine := []string{"vhost:dev", "exchange:/logs", "exchange:dev/amq", "/orders"}
	kinds := map[string]string{"vhost:/": "vhost", "vhost:dev": "vhost", "/orders": "queue"}
	for _, n := range append(append([]string{}, builtins...), mine...) {
		kind := kinds[n]
		if kind == "" {
			kind = "exchange"
		}
		f.MustCreate(t, core.Entity{EntityKey: core.EntityKey{Protocol: core.RabbitMQ, Name: n}, Kind: kind})
	}
	for _, path := range []string{"/", "/fragments/overview"} {
		page := f.mustPage(t, path, "3 built-in entities folded away", `<a href="?builtin=1" id="show-builtin">Show them</a>`, "7 entities")
		for _, n := range builtins {
			if row(page, core.RabbitMQ, n) != "" {
				t.Errorf("GET %s shows %s", path, n)
			}
		}
		for _, n := range mine {
			if row(page, core.RabbitMQ, n) == "" {
				t.Errorf("GET %s hides %s", path, n)
			}
		}
	}
	page := f.mustPage(t, "/?builtin=1", `data-fragment="fragments/overview?builtin=1"`, `<a href="./" id="hide-builtin">Hide them</a>`)
	for _, n := range append(append([]string{}, builtins...), mine...) {
		if r := row(page, core.RabbitMQ, n); r == "" {
			t.Errorf("?builtin=1 hides %s", n)
		}
	}
	if !strings.Contains(page, `<tr class="depth-0 builtin" data-entity="rabbitmq:vhost:/">`) {
		t.Errorf("the default vhost's row is not marked built-in")
	}
	f.mustPage(t, "/fragments/overview?builtin=1&protocol=rabbitmq", `<a href="?protocol=rabbitmq" id="hide-builtin">`)

	m := regexp.MustCompile(`<input id="advance-by"[^>]*placeholder="([^"]*)"[^>]*size="(\d+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no clock box with a placeholder and a size")
	}
	if size, _ := strconv.Atoi(m[2]); len(m[1]) >= size {
		t.Errorf("the clock box is %d characters wide for a placeholder of %d (%q)", size, len(m[1]), m[1])
	}
	f.mustPage(t, "/static/app.css", "font-family: ui-monospace, \"SFMono-Regular\", Menlo, Consolas, monospace; font-size: 12.5px; width: calc(16ch + 14px); }")
}

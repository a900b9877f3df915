package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// MustDLFixture is MustFixture with queries and a store, and two
// protocols with fake hooks:
//
//   - "sb": entity "q" has the dead-letter queue "q/$DLQ"; an item is
//     described with its body as the property "Body", and an item of a
//     dead-letter queue is a dead letter from the queue it belongs to;
//   - "rb": an item whose Meta is "dead:<source>" is a dead letter
//     wherever it is (as RabbitMQ's x-death), from source.
//
// Both resubmit their dead letters to their source.
func MustDLFixture(tb testing.TB, queries map[string]QueryFunc, store core.Store) *fixture {
	tb.Helper()
	f := &fixture{
		engine: core.NewEngine(core.Config{Store: store}),
		clock:  core.NewClock(func() time.Time { return t0 }),
	}
	f.server = NewServer(Config{Addr: ":0", Engine: f.engine, Clock: f.clock, Queries: queries})
	f.engine.Register("sb", core.ProtocolHooks{
		Describe: func(ent *core.Entity, it *core.Item) core.Description {
			d := core.Description{Properties: []core.Setting{{Key: "Body", Value: string(it.Body)}}}
			if src, ok := strings.CutSuffix(ent.Name, "/$DLQ"); ok {
				d.DeadLetter = &core.DeadLetterInfo{Reason: "TTLExpiredException", Description: "expired", Source: src, Rule: "SB-8"}
			}
			return d
		},
		Resubmit: func(dlq *core.Entity, it core.Item) (string, core.Item, error) {
			src, ok := strings.CutSuffix(dlq.Name, "/$DLQ")
			if !ok {
				return "", core.Item{}, core.Errorf(core.EINVALID, "message %d is not a dead letter", it.Seq)
			}
			return src, it, nil
		},
	})
	f.engine.Register("rb", core.ProtocolHooks{
		Describe: func(ent *core.Entity, it *core.Item) core.Description {
			var d core.Description
			if src, ok := strings.CutPrefix(string(it.Meta), "dead:"); ok {
				d.DeadLetter = &core.DeadLetterInfo{Reason: "expired", Source: src, Rule: "RB-9"}
			}
			return d
		},
		Resubmit: func(dlq *core.Entity, it core.Item) (string, core.Item, error) {
			src, ok := strings.CutPrefix(string(it.Meta), "dead:")
			if !ok {
				return "", core.Item{}, core.Errorf(core.EINVALID, "message %d is not a dead letter", it.Seq)
			}
			it.Meta = nil
			return src, it, nil
		},
	})
	for _, en := range []core.Entity{
		{EntityKey: core.EntityKey{Protocol: "sb", Name: "q"}, Kind: "queue", DeadLetterQueue: "q/$DLQ"},
		{EntityKey: core.EntityKey{Protocol: "sb", Name: "q/$DLQ"}, Kind: "deadletterqueue", Parent: "q"},
		{EntityKey: core.EntityKey{Protocol: "rb", Name: "/work"}, Kind: "queue"},
		{EntityKey: core.EntityKey{Protocol: "rb", Name: "/other"}, Kind: "queue"},
		{EntityKey: core.EntityKey{Protocol: "rb", Name: "/dead"}, Kind: "queue"},
		{EntityKey: core.EntityKey{Protocol: "cosmos", Name: "db/c"}, Kind: "container"},
	} {
		f.MustCreate(tb, en)
	}
	return f
}

var (
	sbQ    = core.EntityKey{Protocol: "sb", Name: "q"}
	sbDLQ  = core.EntityKey{Protocol: "sb", Name: "q/$DLQ"}
	rbWork = core.EntityKey{Protocol: "rb", Name: "/work"}
	rbDead = core.EntityKey{Protocol: "rb", Name: "/dead"}
)

// deadLetterSummary is what a test checks of one entity of GET
// /api/deadletters: its name, source, count, partial, and each item as
// "seq:body<-source".
type deadLetterSummary struct {
	Entity, Source string
	Count          int
	Partial        bool
	Items          []string
}

func (f *fixture) deadLetters(tb testing.TB, query string) []deadLetterSummary {
	tb.Helper()
	status, v := f.do(tb, "GET", "/api/deadletters"+query, "")
	if status != 200 {
		tb.Fatalf("GET /api/deadletters%s: %d %v", query, status, v)
	}
	b, _ := json.Marshal(v)
	var got []DeadLetterEntityView
	if err := json.Unmarshal(b, &got); err != nil {
		tb.Fatal(err)
	}
	out := []deadLetterSummary{}
	for _, e := range got {
		s := deadLetterSummary{Entity: e.Protocol + ":" + e.Name, Source: e.Source, Count: e.Count, Partial: e.Partial}
		for _, it := range e.Items {
			if it.DeadLetter == nil {
				tb.Fatalf("%s item %d has no deadLetter", s.Entity, it.Seq)
			}
			s.Items = append(s.Items, fmt.Sprintf("%d:%s<-%s", it.Seq, *it.BodyText, it.DeadLetter.Source))
		}
		out = append(out, s)
	}
	return out
}

func TestItemsShowTheirDescription(t *testing.T) {
	f := MustDLFixture(t, nil, nil)
	f.MustEnqueue(t, sbDLQ, core.Item{Body: []byte("x")})
	status, v := f.do(t, "GET", "/api/entities/sb/q/$DLQ/items", "")
	items, _ := v.([]any)
	if status != 200 || len(items) != 1 {
		t.Fatalf("items: %d %v", status, v)
	}
	it := items[0].(map[string]any)
	want := mustJSON(t, `{"properties":[{"key":"Body","value":"x"}],
		"deadLetter":{"reason":"TTLExpiredException","description":"expired","source":"q","rule":"SB-8"}}`).(map[string]any)
	got := map[string]any{"properties": it["properties"], "deadLetter": it["deadLetter"]}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("item description (-want +got):\n%s", d)
	}
	// An item with no description has neither field.
	f.MustEnqueue(t, core.EntityKey{Protocol: "cosmos", Name: "db/c"}, core.Item{Key: "k"})
	_, v = f.do(t, "GET", "/api/entities/cosmos/db/c/items", "")
	it = v.([]any)[0].(map[string]any)
	if _, ok := it["properties"]; ok {
		t.Errorf("properties of an undescribed item: %v", it)
	}
	if _, ok := it["deadLetter"]; ok {
		t.Errorf("deadLetter of an undescribed item: %v", it)
	}
}

func TestDeadLettersListsEveryEntityHoldingThem(t *testing.T) {
	f := MustDLFixture(t, nil, nil)
	f.check(t, call{"GET", "/api/deadletters", "", 200, `[]`})
	f.MustEnqueue(t, sbQ, core.Item{Body: []byte("live")})
	f.MustEnqueue(t, sbDLQ, core.Item{Body: []byte("a")})
	f.MustEnqueue(t, sbDLQ, core.Item{Body: []byte("b")})
	f.MustEnqueue(t, rbWork, core.Item{Body: []byte("plain")})
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("plain")})
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("c"), Meta: []byte("dead:/work")})
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("d"), Meta: []byte("dead:/work")})
	// A document of a protocol that resubmits nothing is not examined.
	f.MustEnqueue(t, core.EntityKey{Protocol: "cosmos", Name: "db/c"}, core.Item{Key: "k", Meta: []byte("dead:x")})
	for _, tc := range []struct {
		query string
		want  []deadLetterSummary
	}{
		{"", []deadLetterSummary{
			{Entity: "rb:/dead", Source: "/work", Count: 2, Items: []string{"2:c<-/work", "3:d<-/work"}},
			{Entity: "sb:q/$DLQ", Source: "q", Count: 2, Items: []string{"1:a<-q", "2:b<-q"}},
		}},
		{"?limit=1", []deadLetterSummary{
			{Entity: "rb:/dead", Source: "/work", Count: 2, Items: []string{"2:c<-/work"}},
			{Entity: "sb:q/$DLQ", Source: "q", Count: 2, Items: []string{"1:a<-q"}},
		}},
		{"?protocol=sb", []deadLetterSummary{
			{Entity: "sb:q/$DLQ", Source: "q", Count: 2, Items: []string{"1:a<-q", "2:b<-q"}},
		}},
		{"?protocol=cosmos", []deadLetterSummary{}},
	} {
		if d := cmp.Diff(tc.want, f.deadLetters(t, tc.query)); d != "" {
			t.Errorf("deadletters%s (-want +got):\n%s", tc.query, d)
		}
	}
	// Dead letters from several sources: no one source.
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("e"), Meta: []byte("dead:/other")})
	if got := f.deadLetters(t, "?protocol=rb"); len(got) != 1 || got[0].Source != "" || got[0].Count != 3 {
		t.Errorf("dead letters of two sources: %+v", got)
	}
	f.check(t, call{"GET", "/api/deadletters?limit=x", "", 400, `{"error":"limit must be a non-negative integer, got \"x\""}`})
}

// The search for dead letters in entities that are not dead-letter queues
// stops after deadLetterScanEntity items of one entity.
func TestDeadLettersSearchIsBounded(t *testing.T) {
	f := MustDLFixture(t, nil, nil)
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("first"), Meta: []byte("dead:/work")})
	for range deadLetterScanEntity {
		f.MustEnqueue(t, rbDead, core.Item{Body: []byte("plain")})
	}
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("beyond"), Meta: []byte("dead:/work")})
	want := []deadLetterSummary{{Entity: "rb:/dead", Source: "/work", Count: 1, Partial: true, Items: []string{"1:first<-/work"}}}
	if d := cmp.Diff(want, f.deadLetters(t, "")); d != "" {
		t.Fatalf("deadletters (-want +got):\n%s", d)
	}
}

func TestResubmit(t *testing.T) {
	f := MustDLFixture(t, nil, nil)
	a := f.MustEnqueue(t, sbDLQ, core.Item{Body: []byte("a")})
	f.MustEnqueue(t, sbDLQ, core.Item{Body: []byte("b")})
	live := f.MustEnqueue(t, sbQ, core.Item{Body: []byte("live")})
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("plain")})
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("c"), Meta: []byte("dead:/work")})
	f.MustEnqueue(t, rbDead, core.Item{Body: []byte("orphan"), Meta: []byte("dead:/gone")})
	for _, c := range []call{
		{"POST", fmt.Sprintf("/api/entities/sb/q/$DLQ/items/%d/resubmit", a.Seq), "", 200, `{"resubmitted":1,"to":"q"}`},
		{"POST", fmt.Sprintf("/api/entities/sb/q/$DLQ/items/%d/resubmit", a.Seq), "", 404, `{"error":"item 1 of \"q/$DLQ\" not found"}`},
		{"POST", fmt.Sprintf("/api/entities/sb/q/items/%d/resubmit", live.Seq), "", 400, `{"error":"message 1 is not a dead letter"}`},
		{"POST", "/api/entities/sb/nope/items/1/resubmit", "", 404, `{"error":"entity \"nope\" not found"}`},
		{"POST", "/api/entities/sb/q/$DLQ/resubmit", "", 200, `{"resubmitted":1}`},
		{"POST", "/api/entities/sb/q/$DLQ/resubmit", "", 200, `{"resubmitted":0}`},
		{"POST", "/api/entities/rb//dead/resubmit", "", 200, `{"resubmitted":1}`},
		{"POST", "/api/entities/rb//dead/items/3/resubmit", "", 404, `{"error":"item 3 of \"/dead\" cannot be resubmitted: \"/gone\", the entity it was dead-lettered from, no longer exists"}`},
		{"POST", "/api/entities/cosmos/db/c/resubmit", "", 400, `{"error":"cosmos has no dead letters to resubmit"}`},
		{"POST", "/api/entities/sb/q/$DLQ/items/x/resubmit", "", 404, `{"error":"entity \"q/$DLQ/items/x\" not found"}`},
		{"POST", "/api/entities/sb/q/frobnicate", "", 404, `{"error":"no such endpoint: POST /api/entities/sb/q/frobnicate (use /api/entities/{protocol}/{name}/resubmit, /purge, /query or /items/{seq}/resubmit)"}`},
		{"POST", "/api/entities/sb/resubmit", "", 404, `{"error":"no such endpoint: POST /api/entities/sb/resubmit (use /api/entities/{protocol}/{name}/resubmit, /purge, /query or /items/{seq}/resubmit)"}`},
	} {
		f.check(t, c)
	}
	var got []string
	items, _ := f.engine.Items(f.clock.Now(), sbQ, 0)
	for _, it := range items {
		got = append(got, string(it.Body))
	}
	items, _ = f.engine.Items(f.clock.Now(), rbWork, 0)
	for _, it := range items {
		got = append(got, string(it.Body)+":"+string(it.Meta))
	}
	if d := cmp.Diff([]string{"live", "a", "b", "c:"}, got); d != "" {
		t.Fatalf("resubmitted (-want +got):\n%s", d)
	}
}

// An entity whose name ends like an item's path: the path names the
// entity's items only when its entity part is an entity.
func TestResubmitOfAnEntityNamedLikeAnItem(t *testing.T) {
	f := MustDLFixture(t, nil, nil)
	k := core.EntityKey{Protocol: "rb", Name: "/x/items/1"}
	f.MustCreate(t, core.Entity{EntityKey: k, Kind: "queue"})
	f.MustEnqueue(t, k, core.Item{Body: []byte("a"), Meta: []byte("dead:/work")})
	f.MustEnqueue(t, k, core.Item{Body: []byte("b"), Meta: []byte("dead:/work")})
	f.check(t, call{"POST", "/api/entities/rb//x/items/1/resubmit", "", 200, `{"resubmitted":2}`})
}

func TestPurge(t *testing.T) {
	f := MustDLFixture(t, nil, nil)
	for _, b := range []string{"a", "b", "c"} {
		f.MustEnqueue(t, sbDLQ, core.Item{Body: []byte(b)})
	}
	f.check(t, call{"POST", "/api/entities/sb/q/$DLQ/purge", "", 200, `{"purged":3}`})
	f.check(t, call{"POST", "/api/entities/sb/q/$DLQ/purge", "", 200, `{"purged":0}`})
	f.check(t, call{"POST", "/api/entities/sb/nope/purge", "", 404, `{"error":"entity \"nope\" not found"}`})
	f.check(t, call{"GET", "/api/deadletters", "", 200, `[]`})
}

func TestQuery(t *testing.T) {
	var gotName, gotQuery string
	var gotMax int
	queries := map[string]QueryFunc{"cosmos": func(ctx context.Context, name, query string, max int) ([]json.RawMessage, error) {
		gotName, gotQuery, gotMax = name, query, max
		switch query {
		case "SELECT FROM c":
			return nil, core.Errorf(core.EINVALID, "Syntax error, incorrect syntax near 'FROM'.")
		case "SELECT * FROM nothing":
			return nil, nil
		case "BROKEN":
			return nil, errors.New("disk on fire")
		}
		return []json.RawMessage{json.RawMessage(`{"id":"a"}`), json.RawMessage(`3`), json.RawMessage(`"x"`)}, nil
	}}
	f := MustDLFixture(t, queries, nil)
	for _, c := range []call{
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT * FROM c"}`, 200, `{"rows":[{"id":"a"},3,"x"],"count":3}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT * FROM c","max":2}`, 200, `{"rows":[{"id":"a"},3],"count":2}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT * FROM nothing"}`, 200, `{"rows":[],"count":0}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT FROM c"}`, 400, `{"error":"Syntax error, incorrect syntax near 'FROM'."}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"BROKEN"}`, 500, `{"error":"internal error"}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":" "}`, 400, `{"error":"the body needs a query: {\"query\": \"SELECT ...\", \"max\": 100}"}`},
		{"POST", "/api/entities/cosmos/db/c/query", ``, 400, `{"error":"the body needs a query: {\"query\": \"SELECT ...\", \"max\": 100}"}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT * FROM c","max":0}`, 400, `{"error":"max must be between 1 and 10000, got 0"}`},
		{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT * FROM c","top":1}`, 400, `{"error":"invalid JSON body: json: unknown field \"top\""}`},
		{"POST", "/api/entities/sb/q/query", `{"query":"SELECT * FROM c"}`, 404, `{"error":"sb has no query language: the data explorer queries Cosmos DB containers"}`},
	} {
		f.check(t, c)
	}
	f.check(t, call{"POST", "/api/entities/cosmos/db/c/query", `{"query":"SELECT * FROM c","max":7}`, 200, `{"rows":[{"id":"a"},3,"x"],"count":3}`})
	if gotName != "db/c" || gotQuery != "SELECT * FROM c" || gotMax != 7 {
		t.Fatalf("QueryFunc got %q %q %d", gotName, gotQuery, gotMax)
	}
}

// failingStore fails every commit.
type failingStore struct{ core.MemStore }

func (s *failingStore) Append(ops []core.Op) *core.Commit {
	c := core.NewCommit()
	c.Done(errors.New("disk full"))
	return c
}

// The actions answer only once their change is durable: a failed commit
// is a 500.
func TestActionsWaitForTheirCommit(t *testing.T) {
	f := MustDLFixture(t, nil, &failingStore{})
	for _, k := range []core.EntityKey{sbQ, sbDLQ} {
		if _, _, err := f.engine.Update(f.clock.Now(), k, func(en *core.Entity) error { en.Durable = true; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	it, _, err := f.engine.Enqueue(f.clock.Now(), sbDLQ, core.Item{Body: []byte("a"), Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	f.check(t, call{"POST", fmt.Sprintf("/api/entities/sb/q/$DLQ/items/%d/resubmit", it.Seq), "", 500, `{"error":"internal error"}`})
	f.check(t, call{"POST", "/api/entities/sb/q/resubmit", "", 400, `{"error":"message 1 is not a dead letter"}`})
	f.check(t, call{"POST", "/api/entities/sb/q/purge", "", 500, `{"error":"internal error"}`})
}

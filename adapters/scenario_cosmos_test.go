package adapters_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// MustContainer creates container db/name with the defaultTtl property as
// decoded JSON (nil for absent or null), its policy from the adapter.
func (s *scenario) MustContainer(name string, defaultTTL any) core.EntityKey {
	s.tb.Helper()
	p, err := adapters.CosmosContainerPolicy(defaultTTL)
	if err != nil {
		s.tb.Fatal(err)
	}
	return s.MustCreate(core.Cosmos, "db/"+name, "container", p, func(en *core.Entity) { en.Parent = "db" })
}

// cosmosDecode decodes a document as the Cosmos front-end does.
func cosmosDecode(tb testing.TB, doc string) map[string]any {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// upsert writes a document as create, replace and upsert do: its ttl read by
// the adapter, keyed by its id. A bad ttl is the adapter's 400 and nothing
// is written.
func (s *scenario) upsert(c core.EntityKey, doc string) (core.Item, error) {
	s.tb.Helper()
	m := cosmosDecode(s.tb, doc)
	ttl, err := adapters.CosmosItemTTL(m)
	if err != nil {
		return core.Item{}, err
	}
	it, commit, err := s.e.Put(s.now(), c, core.Item{Key: m["id"].(string), Body: []byte(doc), TTL: ttl, Persistent: true})
	if err != nil {
		s.tb.Fatal(err)
	}
	return it, commit.Wait(s.tb.Context())
}

func (s *scenario) MustUpsert(c core.EntityKey, doc string) core.Item {
	s.tb.Helper()
	it, err := s.upsert(c, doc)
	if err != nil {
		s.tb.Fatal(err)
	}
	return it
}

// read is a point read: the document, or "" for a 404.
func (s *scenario) read(c core.EntityKey, id string) string {
	s.tb.Helper()
	it, ok, err := s.e.Get(s.now(), c, id)
	if err != nil {
		s.tb.Fatal(err)
	}
	if !ok {
		return ""
	}
	return string(it.Body)
}

// query returns the ids of every document a query or read-feed sees.
func (s *scenario) query(c core.EntityKey) []string {
	s.tb.Helper()
	var ids []string
	err := s.e.Scan(s.now(), c, 0, func(it *core.Item) bool {
		ids = append(ids, it.Key)
		return true
	})
	if err != nil {
		s.tb.Fatal(err)
	}
	return ids
}

func TestCosmosTTLCountsFromLastWrite_CO1(t *testing.T) {
	s := MustScenario(t)
	c := s.MustContainer("c", json.Number("10"))
	first := s.MustUpsert(c, `{"id":"a","v":1}`)
	own := s.MustUpsert(c, `{"id":"b","ttl":5}`)
	check(t, "expiries", []string{"10s CO-4", "5s CO-4"}, []string{expiry(first), expiry(own)})
	s.advance(4 * time.Second)
	own = s.MustUpsert(c, `{"id":"b","ttl":5}`) // a replace restarts the item's own ttl too
	s.advance(4 * time.Second)
	second := s.MustUpsert(c, `{"id":"a","v":2}`)
	check(t, "rewritten: modified, expiry", []string{"8s", "18s CO-4", "9s CO-4"}, []string{since(second.ModifiedAt), expiry(second), expiry(own)})
	s.advance(time.Second)
	check(t, "query at 9s", []string{"a"}, s.query(c))
	s.advance(7 * time.Second)
	check(t, "read at 16s", `{"id":"a","v":2}`, s.read(c, "a"))
	s.advance(2 * time.Second)
	check(t, "read at 18s", "", s.read(c, "a"))
	s.wantEvents(c, "expired CO-6 b due 9s at 9s", "expired CO-6 a due 18s at 18s")
}

// TestCosmosTimeToLiveExamplesEndToEnd_CO2_CO3_CO4 walks the three example tables of
// seeds/cosmos-time-to-live.md end to end: the container's defaultTtl and
// the item's ttl, a write at t0, then reads until it expires or for a year.
func TestCosmosTimeToLiveExamplesEndToEnd_CO2_CO3_CO4(t *testing.T) {
	tests := []struct {
		name       string
		defaultTTL any
		doc        string
		want       string // expiry and rule
	}{
		{"Example1NullItemTTLMissing_CO2", nil, `{"id":"a"}`, "never CO-2"},
		{"Example1NullItemTTLMinus1_CO2", nil, `{"id":"a","ttl":-1}`, "never CO-2"},
		{"Example1NullItemTTL2000_CO2", nil, `{"id":"a","ttl":2000}`, "never CO-2"},
		{"Example2Minus1ItemTTLMissing_CO3", json.Number("-1"), `{"id":"a"}`, "never CO-3"},
		{"Example2Minus1ItemTTLMinus1_CO3", json.Number("-1"), `{"id":"a","ttl":-1}`, "never CO-3"},
		{"Example2Minus1ItemTTL2000_CO3", json.Number("-1"), `{"id":"a","ttl":2000}`, "33m20s CO-3"},
		{"Example3Default1000ItemTTLMissing_CO4", json.Number("1000"), `{"id":"a"}`, "16m40s CO-4"},
		{"Example3Default1000ItemTTLMinus1_CO4", json.Number("1000"), `{"id":"a","ttl":-1}`, "never CO-4"},
		{"Example3Default1000ItemTTL2000_CO4", json.Number("1000"), `{"id":"a","ttl":2000}`, "33m20s CO-4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			c := s.MustContainer("c", tt.defaultTTL)
			it := s.MustUpsert(c, tt.doc)
			check(t, "expiry", tt.want, expiry(it))
			if it.DueAt.IsZero() {
				s.advance(365 * day)
				check(t, "read a year later", tt.doc, s.read(c, "a"))
				s.wantEvents(c)
				return
			}
			s.advance(it.DueAt.Sub(s.now()) - time.Second)
			check(t, "read a second before", tt.doc, s.read(c, "a"))
			s.advance(time.Second)
			check(t, "read at expiry", "", s.read(c, "a"))
			s.wantEvents(c, "expired CO-6 a due "+since(it.DueAt)+" at "+since(it.DueAt))
		})
	}
}

func TestCosmosInvalidTTLRefused_CO5(t *testing.T) {
	for _, v := range []any{json.Number("0"), json.Number("-2"), json.Number("1.5"), "abc"} {
		if _, err := adapters.CosmosContainerPolicy(v); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("defaultTtl %v: %v, want 400", v, err)
		}
	}
	s := MustScenario(t)
	c := s.MustContainer("c", json.Number("-1"))
	for _, doc := range []string{`{"id":"zero","ttl":0}`, `{"id":"null","ttl":null}`, `{"id":"neg","ttl":-2}`, `{"id":"frac","ttl":1.5}`, `{"id":"big","ttl":2147483648}`} {
		if _, err := s.upsert(c, doc); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("%s: %v, want 400", doc, err)
		}
	}
	check(t, "stored after refused writes", []string(nil), s.query(c))
	it := s.MustUpsert(c, `{"id":"max","ttl":2147483647}`)
	check(t, "largest ttl", "24855d3h14m7s CO-3", since(it.DueAt)+" "+it.Rule)
}

func TestCosmosExpiredItemGoneBeforeSweep_CO6(t *testing.T) {
	s := MustScenario(t)
	c := s.MustContainer("c", json.Number("60"))
	s.MustUpsert(c, `{"id":"a"}`)
	s.MustUpsert(c, `{"id":"b","ttl":-1}`)
	s.MustUpsert(c, `{"id":"c","ttl":120}`)
	s.tick(time.Minute) // no background sweep runs
	check(t, "point read of the expired item", "", s.read(c, "a"))
	check(t, "query", []string{"b", "c"}, s.query(c))
	s.tick(time.Minute)
	check(t, "query at 2m", []string{"b"}, s.query(c))
	check(t, "point read at 2m", "", s.read(c, "c"))
	s.wantEvents(c, "expired CO-6 a due 1m at 1m", "expired CO-6 c due 2m at 2m")
}

func TestCosmosDefaultTTLChangeAppliesToStoredItems_CO7(t *testing.T) {
	s := MustScenario(t)
	c := s.MustContainer("c", json.Number("3600"))
	s.MustUpsert(c, `{"id":"a"}`)
	s.MustUpsert(c, `{"id":"b","ttl":-1}`)
	s.MustUpsert(c, `{"id":"c","ttl":7200}`)
	policy := func(defaultTTL any) core.Policy {
		p, err := adapters.CosmosContainerPolicy(defaultTTL)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	expiries := func() []string {
		its, err := s.e.Items(s.now(), c, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range its {
			out = append(out, it.Key+" "+expiry(it))
		}
		return out
	}
	s.advance(30 * time.Minute)
	s.MustUpdatePolicy(c, policy(json.Number("600"))) // a, written 30m ago, is past a 10m default
	check(t, "after defaultTtl 600 at 30m", []string{"b never CO-4", "c 2h CO-4"}, expiries())
	s.MustUpdatePolicy(c, policy(nil)) // TTL off: item ttls have no effect
	check(t, "after defaultTtl null", []string{"b never CO-2", "c never CO-2"}, expiries())
	s.advance(3 * time.Hour)
	check(t, "query with TTL off at 3h30m", []string{"b", "c"}, s.query(c))
	s.MustUpdatePolicy(c, policy(json.Number("-1"))) // c's own ttl counts again from its last write
	check(t, "after defaultTtl -1 at 3h30m", []string{"b never CO-3"}, expiries())
	s.wantEvents(c, "expired CO-6 a due 10m at 30m", "expired CO-6 c due 2h at 3h30m")
}

package adapters

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// cosmosDoc decodes a JSON document as the Cosmos front-end does.
func cosmosDoc(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestCosmosTimeToLiveExamples walks the three example tables of the Time
// to Live article (seeds/cosmos-time-to-live.md) row by row: container
// setting × item ttl → never, or expires N seconds after the last write.
func TestCosmosTimeToLiveExamples(t *testing.T) {
	const never = -1
	tests := []struct {
		name       string
		defaultTTL any // as decoded: nil for absent or null
		doc        string
		wantAfter  int // seconds after the last write; never
	}{
		// Example 1: DefaultTimeToLive = null.
		// rule: CO-2
		{"Example1NullDefaultItemTTLMissing", nil, `{"id":"a"}`, never},
		// rule: CO-2
		{"Example1NullDefaultItemTTLMinus1", nil, `{"id":"a","ttl":-1}`, never},
		// rule: CO-2
		{"Example1NullDefaultItemTTL2000", nil, `{"id":"a","ttl":2000}`, never},
		// Example 2: DefaultTimeToLive = -1.
		// rule: CO-3
		{"Example2Minus1DefaultItemTTLMissing", json.Number("-1"), `{"id":"a"}`, never},
		// rule: CO-3
		{"Example2Minus1DefaultItemTTLMinus1", json.Number("-1"), `{"id":"a","ttl":-1}`, never},
		// rule: CO-3
		{"Example2Minus1DefaultItemTTL2000", json.Number("-1"), `{"id":"a","ttl":2000}`, 2000},
		// Example 3: DefaultTimeToLive = 1000.
		// rule: CO-4
		{"Example3Default1000ItemTTLMissing", json.Number("1000"), `{"id":"a"}`, 1000},
		// rule: CO-4
		{"Example3Default1000ItemTTLMinus1", json.Number("1000"), `{"id":"a","ttl":-1}`, never},
		// rule: CO-4
		{"Example3Default1000ItemTTL2000", json.Number("1000"), `{"id":"a","ttl":2000}`, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CosmosContainerPolicy(tt.defaultTTL)
			if err != nil {
				t.Fatalf("CosmosContainerPolicy(%v): %v", tt.defaultTTL, err)
			}
			ttl, err := CosmosItemTTL(cosmosDoc(t, tt.doc))
			if err != nil {
				t.Fatalf("CosmosItemTTL(%s): %v", tt.doc, err)
			}
			// rule: CO-1
			modified, enqueued := t0.Add(time.Hour), t0
			want := time.Time{}
			if tt.wantAfter != never {
				want = modified.Add(time.Duration(tt.wantAfter) * time.Second)
			}
			if got := dueAt(p, ttl, enqueued, modified); !got.Equal(want) {
				t.Errorf("due = %v, want %v", got, want)
			}
		})
	}
}

func TestCosmosContainerPolicy(t *testing.T) {
	tests := []struct {
		name       string
		defaultTTL any
		want       core.Policy
	}{
		// rule: CO-2
		{"AbsentOrNull", nil, core.Policy{Base: core.FromModified, BaseResolution: time.Second, Retroactive: true, IgnoreItemTTL: true,
			Rules: core.RuleIDs{Never: "CO-2", Expire: "CO-6"}}},
		// rule: CO-3
		{"MinusOne", json.Number("-1"), core.Policy{Base: core.FromModified, BaseResolution: time.Second, Retroactive: true, DefaultTTL: core.Forever,
			Rules: core.RuleIDs{ItemTTL: "CO-3", DefaultTTL: "CO-3", Never: "CO-3", Expire: "CO-6"}}},
		// rule: CO-4
		{"Seconds", float64(3600), core.Policy{Base: core.FromModified, BaseResolution: time.Second, Retroactive: true, DefaultTTL: core.After(time.Hour),
			Rules: core.RuleIDs{ItemTTL: "CO-4", DefaultTTL: "CO-4", Never: "CO-4", Expire: "CO-6"}}},
		// rule: CO-4
		{"GoInt32Max", int32(2147483647), core.Policy{Base: core.FromModified, BaseResolution: time.Second, Retroactive: true,
			DefaultTTL: core.After(2147483647 * time.Second),
			Rules:      core.RuleIDs{ItemTTL: "CO-4", DefaultTTL: "CO-4", Never: "CO-4", Expire: "CO-6"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CosmosContainerPolicy(tt.defaultTTL)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("policy mismatch (-want +got):\n%s", diff)
			}
			// rule: CO-4
			if got.MaxTTL.IsSet() {
				t.Error("MaxTTL set: an item's own ttl must not be capped by the container default")
			}
		})
	}
}

// rule: CO-4
func TestCosmosItemTTLNotCappedByDefault(t *testing.T) {
	p, err := CosmosContainerPolicy(json.Number("10"))
	if err != nil {
		t.Fatal(err)
	}
	ttl, err := CosmosItemTTL(cosmosDoc(t, `{"ttl":86400}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := effectiveTTL(p, ttl); got != core.After(24*time.Hour) {
		t.Errorf("effective TTL = %v, want 24h", got)
	}
}

// rule: CO-7
func TestCosmosDefaultTTLChangeIsRetroactive(t *testing.T) {
	before, _ := CosmosContainerPolicy(json.Number("1000"))
	after, _ := CosmosContainerPolicy(json.Number("10"))
	if !before.Retroactive || !after.Retroactive {
		t.Fatal("Retroactive = false; a changed defaultTtl must apply to stored items at once")
	}
	modified := t0
	if got, want := dueAt(after, core.NoTTL, t0, modified), modified.Add(10*time.Second); !got.Equal(want) {
		t.Errorf("due under the new default = %v, want %v", got, want)
	}
}

func TestCosmosTTLValidation(t *testing.T) {
	msg := func(prop, v string) string {
		return "The input " + prop + " '" + v + "' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire."
	}
	items := []struct {
		name string
		doc  string
		want string // "" for valid
	}{
		{"Missing", `{"id":"a"}`, ""},
		{"MinusOne", `{"ttl":-1}`, ""},
		{"One", `{"ttl":1}`, ""},
		{"Max", `{"ttl":2147483647}`, ""},
		{"IntegralFloat", `{"ttl":10.0}`, ""},
		// rule: CO-5
		{"Zero", `{"ttl":0}`, msg("ttl", "0")},
		// rule: CO-5
		{"Null", `{"ttl":null}`, msg("ttl", "null")},
		// rule: CO-5
		{"MinusTwo", `{"ttl":-2}`, msg("ttl", "-2")},
		// rule: CO-5
		{"OverInt32", `{"ttl":2147483648}`, msg("ttl", "2147483648")},
		// rule: CO-5
		{"Huge", `{"ttl":99999999999999999999}`, msg("ttl", "99999999999999999999")},
		// rule: CO-5
		{"Fraction", `{"ttl":1.5}`, msg("ttl", "1.5")},
		// rule: CO-5
		{"String", `{"ttl":"10"}`, msg("ttl", `"10"`)},
		// rule: CO-5
		{"Bool", `{"ttl":true}`, msg("ttl", "true")},
		// rule: CO-5
		{"Object", `{"ttl":{"s":1}}`, msg("ttl", `{"s":1}`)},
	}
	for _, tt := range items {
		t.Run("Item"+tt.name, func(t *testing.T) {
			_, err := CosmosItemTTL(cosmosDoc(t, tt.doc))
			checkCosmosErr(t, err, tt.want)
		})
	}
	containers := []struct {
		name string
		v    any
		want string
	}{
		{"MinusOne", float64(-1), ""},
		{"Max", json.Number("2147483647"), ""},
		// rule: CO-5
		{"Zero", json.Number("0"), msg("defaultTtl", "0")},
		// rule: CO-5
		{"ZeroFloat", float64(0), msg("defaultTtl", "0")},
		// rule: CO-5
		{"MinusFive", int64(-5), msg("defaultTtl", "-5")},
		// rule: CO-5
		{"OverInt32", float64(1 << 31), msg("defaultTtl", "2147483648")},
		// rule: CO-5
		{"Fraction", 0.5, msg("defaultTtl", "0.5")},
		// rule: CO-5
		{"String", "60", msg("defaultTtl", `"60"`)},
	}
	for _, tt := range containers {
		t.Run("Container"+tt.name, func(t *testing.T) {
			_, err := CosmosContainerPolicy(tt.v)
			checkCosmosErr(t, err, tt.want)
		})
	}
}

func checkCosmosErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if code := core.ErrorCode(err); code != core.EINVALID {
		t.Fatalf("code = %q (err %v), want %q", code, err, core.EINVALID)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("message mismatch (-want +got):\n%s", diff)
	}
}

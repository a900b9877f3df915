package adapters

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// cosmosMaxTTL is the largest TTL Cosmos DB accepts, in seconds (int32).
const cosmosMaxTTL = math.MaxInt32

// CosmosContainerPolicy returns the policy of a container whose defaultTtl
// is defaultTTL, the JSON-decoded property (json.Number, float64 or a Go
// integer): nil when the property is absent or null turns TTL off, so
// nothing expires and item ttl has no effect (CO-2); -1 turns it on with no
// default, so only items with a ttl of their own expire (CO-3); n in
// 1..2147483647 expires items n seconds after their last write unless their
// own ttl says otherwise (CO-4). An item's own ttl overrides the default and
// is not capped by it. Expiry counts from the last modification (CO-1) and a
// changed defaultTtl applies at once to stored items (CO-7); expired items
// are gone (CO-6). Any other value is a *core.Error with code core.EINVALID
// and the service's 400 text (CO-5).
func CosmosContainerPolicy(defaultTTL any) (core.Policy, error) {
	p := core.Policy{
		Base: core.FromModified,
		// _ts is in whole seconds and the TTL counts from it (CO-1).
		BaseResolution: time.Second,
		Retroactive:    true,
		OnExpire:       core.Drop,
	}
	if defaultTTL == nil {
		p.IgnoreItemTTL = true
		p.Rules = core.RuleIDs{Never: "CO-2", Expire: "CO-6"}
		return p, nil
	}
	ttl, err := cosmosTTL("defaultTtl", defaultTTL)
	if err != nil {
		return core.Policy{}, err
	}
	p.DefaultTTL = ttl
	rule := "CO-4"
	if ttl.IsForever() {
		rule = "CO-3"
	}
	p.Rules = core.RuleIDs{ItemTTL: rule, DefaultTTL: rule, Never: rule, Expire: "CO-6"}
	return p, nil
}

// CosmosItemTTL returns the TTL an item sets for itself in its ttl
// property, doc being the decoded JSON body: unset when there is no ttl
// property, core.Forever for -1 (never expire), and n seconds for n in
// 1..2147483647 (CO-4). Anything else, null and 0 included, is a
// *core.Error with code core.EINVALID and the service's 400 text (CO-5),
// whatever the container's defaultTtl.
func CosmosItemTTL(doc map[string]any) (core.TTL, error) {
	v, ok := doc["ttl"]
	if !ok {
		return core.NoTTL, nil
	}
	return cosmosTTL("ttl", v)
}

// cosmosTTL reads a TTL property in seconds: -1 or 1..2147483647.
func cosmosTTL(property string, v any) (core.TTL, error) {
	n, ok := cosmosInt(v)
	switch {
	case ok && n == -1:
		return core.Forever, nil
	case ok && n >= 1 && n <= cosmosMaxTTL:
		return core.After(time.Duration(n) * time.Second), nil
	}
	return core.NoTTL, core.Errorf(core.EINVALID,
		"The input %s '%s' is invalid. Ensure to provide a nonzero positive integer less than or equal to '%d', or '-1' which means never expire.",
		property, cosmosText(v), cosmosMaxTTL)
}

// cosmosInt reads a JSON number that is an integer: 5, 5.0 and 5e0 alike.
// Integers too large for int64 come back as math.MaxInt64, out of range.
func cosmosInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		return cosmosInt(uint64(x))
	case uint64:
		if x > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(x), true
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, true
		}
		f, err := x.Float64()
		if err != nil {
			return 0, false
		}
		return cosmosInt(f)
	case float32:
		return cosmosInt(float64(x))
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			return 0, false
		}
		if math.Abs(x) > cosmosMaxTTL+1 {
			return math.MaxInt64, true
		}
		return int64(x), true
	}
	return 0, false
}

// cosmosText writes a value the way the service quotes it in its message:
// as JSON text ("0", "null", "1.5", "\"abc\"").
func cosmosText(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

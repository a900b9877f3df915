package cosmos

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// A container's uniqueKeyPolicy: within one logical partition (partition
// key value), no two items have the same values at the paths of one unique
// key. The rule lives in the engine (core.Item.Unique,
// docs/architecture.md, "Unique values"): prepare, which makes the core
// item of every document any write path stores, derives the item's unique
// values here, outside the engine's lock, and the engine refuses a write
// whose value another live item of the container holds. So every write
// path, one to come included, is checked at the instant it writes, against
// the items live at that instant.

// The service's limits on a uniqueKeyPolicy.
const (
	maxUniqueKeys  = 10 // unique keys in a policy
	maxUniquePaths = 16 // paths in one unique key
)

// errUniqueViolation is the service's answer to a write that a unique key
// refuses.
func errUniqueViolation() *apiError {
	return errorf(http.StatusConflict, "Unique index constraint violation.")
}

// errUniqueChanged is the service's answer to a replace of a container
// that changes its uniqueKeyPolicy, which is fixed at its creation.
func errUniqueChanged() *apiError {
	return errorf(http.StatusForbidden, "The unique index cannot be modified. To change the unique index, remove the collection and re-create a new one.")
}

// readUniqueKeys reads a container's uniqueKeyPolicy: the paths of each of
// its unique keys, nil when it has none, or the service's 400 for a policy
// it refuses (over its limits, a path that is not a property path).
func readUniqueKeys(o *query.Object) ([][]string, error) {
	v, ok := o.Get("uniqueKeyPolicy")
	if !ok || v == nil {
		return nil, nil
	}
	po, ok := v.(*query.Object)
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The unique key policy is invalid: it must be an object.")
	}
	kv, _ := po.Get("uniqueKeys")
	if kv == nil {
		return nil, nil
	}
	arr, ok := kv.([]any)
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The unique key policy is invalid: uniqueKeys must be an array.")
	}
	if len(arr) > maxUniqueKeys {
		return nil, errorf(http.StatusBadRequest, "The number of unique keys %d exceeds the maximum allowed number of unique keys %d.", len(arr), maxUniqueKeys)
	}
	var keys [][]string
	for _, k := range arr {
		ko, ok := k.(*query.Object)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "The unique key policy is invalid: each unique key must be an object.")
		}
		pv, _ := ko.Get("paths")
		paths, _ := pv.([]any)
		if len(paths) == 0 {
			return nil, errorf(http.StatusBadRequest, "The unique key policy is invalid: a unique key must have at least one path.")
		}
		if len(paths) > maxUniquePaths {
			return nil, errorf(http.StatusBadRequest, "The number of paths %d in a unique key exceeds the maximum allowed number of paths %d.", len(paths), maxUniquePaths)
		}
		var key []string
		for _, p := range paths {
			str, ok := p.(string)
			if !ok || !validUniquePath(str) {
				return nil, errorf(http.StatusBadRequest, "The unique key path '%s' is invalid. A unique key path must start with '/' and name a property, without a wildcard or a trailing '/'.", valueText(p))
			}
			key = append(key, str)
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// validUniquePath reports whether p is a path a unique key may have: "/a"
// or "/a/b", without wildcards ('*', '?') or empty segments.
func validUniquePath(p string) bool {
	if len(p) < 2 || p[0] != '/' || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "*?") {
		return false
	}
	return !strings.Contains(p, "//")
}

// sameUniqueKeys reports whether two policies have the same unique keys,
// in the same order.
func sameUniqueKeys(a, b [][]string) bool {
	return slices.EqualFunc(a, b, slices.Equal)
}

// splitUniqueKeys returns the segments of each path of keys.
func splitUniqueKeys(keys [][]string) [][][]string {
	if len(keys) == 0 {
		return nil
	}
	out := make([][][]string, len(keys))
	for i, k := range keys {
		for _, p := range k {
			out[i] = append(out[i], splitPath(p))
		}
	}
	return out
}

// uniqueValues returns the unique values of document o of partition group
// (its canonical partition key), under the unique keys split: for each
// key, the group, the key's number and the JSON of the document's value at
// each of its paths. A path the document does not have counts as null, as
// the service takes it (a missing value takes part in the constraint, so
// one item at most per partition may lack it). nil without unique keys.
func uniqueValues(split [][][]string, group string, o *query.Object) []string {
	if len(split) == 0 {
		return nil
	}
	out := make([]string, len(split))
	var b []byte
	for i, key := range split {
		b = append(b[:0], group...)
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(i), 10)
		for _, segs := range key {
			b = append(b, 0)
			b = query.AppendJSON(b, valueAt(o, segs))
		}
		out[i] = string(b)
	}
	return out
}

// valueAt returns the value at the path segs of o, nil when there is none.
func valueAt(o *query.Object, segs []string) any {
	var v any = o
	for _, seg := range segs {
		obj, ok := v.(*query.Object)
		if !ok {
			return nil
		}
		if v, ok = obj.Get(seg); !ok || v == query.Undefined {
			return nil
		}
	}
	return v
}

// recoveredUnique is the engine's Unique hook: the unique values of a
// stored document, derived again at start (core.ProtocolHooks.Unique). It
// runs inside the engine's lock while Recover loads, one call at a time:
// it keeps the last container's parsed keys in last, which only it uses,
// and takes no lock.
func (s *Server) recoveredUnique(ent *core.Entity, it *core.Item) []string {
	if ent.Kind != kindContainer {
		return nil
	}
	l := &s.lastUnique
	if l.key != ent.EntityKey || string(l.raw) != string(ent.Meta) {
		var m struct {
			UniqueKeys [][]string `json:"uniqueKeys"`
		}
		if err := json.Unmarshal(ent.Meta, &m); err != nil {
			return nil
		}
		l.key, l.raw, l.split = ent.EntityKey, ent.Meta, splitUniqueKeys(m.UniqueKeys)
	}
	if len(l.split) == 0 {
		return nil
	}
	o, err := decodeObject(it.Body)
	if err != nil {
		return nil
	}
	return uniqueValues(l.split, it.Group, o)
}

// lastUnique is the container recoveredUnique parsed last.
type lastUnique struct {
	key   core.EntityKey
	raw   []byte
	split [][][]string
}

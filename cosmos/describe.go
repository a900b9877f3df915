package cosmos

import (
	"encoding/json"
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// Hooks are the server's hooks for core.Engine.Register: items described
// for the dashboard, and each change of a document, which the
// all-versions-and-deletes change feed lists (versions.go), and the unique
// values of the documents loaded at start (unique.go). Cosmos DB has
// no dead letters, so nothing else.
func (s *Server) Hooks() core.ProtocolHooks {
	return core.ProtocolHooks{Describe: describe, ItemChanged: s.itemChanged, Unique: s.recoveredUnique}
}

// describe is the engine's Describe hook: an item's id, partition key and
// system properties (_rid, _etag, _ts) and its own ttl, if it has one; a
// permission's token, when it was issued and when it expires.
func describe(ent *core.Entity, it *core.Item) core.Description {
	if ent.Kind == kindPermission {
		// A resource token the permission issued (tokens.go).
		var tok struct{ Issued, Expires string }
		json.Unmarshal(it.Body, &tok)
		return core.Description{Properties: []core.Setting{{Key: "token", Value: it.Key},
			{Key: "issued", Value: tok.Issued}, {Key: "expires", Value: tok.Expires}}}
	}
	if ent.Kind != kindContainer {
		return core.Description{}
	}
	etag, rid := splitMeta(it.Meta)
	var sys struct {
		TS  json.RawMessage `json:"_ts"`
		TTL json.RawMessage `json:"ttl"`
	}
	json.Unmarshal(it.Body, &sys) // a stored item is a JSON object
	var out []core.Setting
	add := func(k, v string) {
		if v != "" {
			out = append(out, core.Setting{Key: k, Value: v})
		}
	}
	if id, ok := strings.CutPrefix(it.Key, it.Group); ok {
		add("id", id)
	}
	add("partitionKey", it.Group)
	add("_rid", rid)
	add("_etag", etag)
	add("_ts", string(sys.TS))
	add("ttl", string(sys.TTL))
	return core.Description{Properties: out}
}

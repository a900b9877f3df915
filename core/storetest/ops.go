package storetest

import (
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// base is the instant the suite's data is made around: nanoseconds that
// the store truncates, and a zone that it turns into UTC.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535_897_932, time.FixedZone("UTC+1", 3600))

func key(protocol, name string) core.EntityKey {
	return core.EntityKey{Protocol: protocol, Name: name}
}

// newEntity returns a durable queue named k with a small policy.
func newEntity(k core.EntityKey) *core.Entity {
	return &core.Entity{
		EntityKey: k,
		Kind:      "queue",
		Durable:   true,
		Policy: core.Policy{
			DefaultTTL: core.After(14 * 24 * time.Hour),
			Rules:      core.RuleIDs{DefaultTTL: "SB-1"},
		},
		Created: base,
	}
}

// newItem returns a persistent active item with a TTL of a minute.
func newItem(seq uint64, body string) *core.Item {
	at := base.Add(time.Duration(seq) * time.Millisecond)
	return &core.Item{
		Seq:          seq,
		Body:         []byte(body),
		EnqueuedAt:   at,
		ModifiedAt:   at,
		TTL:          core.After(time.Minute),
		EffectiveTTL: core.After(time.Minute),
		DueAt:        at.Add(time.Minute),
		Rule:         "SB-1",
		Persistent:   true,
	}
}

func putEntity(e *core.Entity) core.Op {
	return core.Op{Kind: core.OpPutEntity, Key: e.EntityKey, Entity: e}
}

func deleteEntity(k core.EntityKey) core.Op {
	return core.Op{Kind: core.OpDeleteEntity, Key: k}
}

func putItem(k core.EntityKey, it *core.Item) core.Op {
	return core.Op{Kind: core.OpPutItem, Key: k, Item: it}
}

func deleteItem(k core.EntityKey, seq uint64) core.Op {
	return core.Op{Kind: core.OpDeleteItem, Key: k, Seq: seq}
}

// deleteItemAt deletes item seq kept at row (core.Item.Row).
func deleteItemAt(k core.EntityKey, seq, row uint64) core.Op {
	return core.Op{Kind: core.OpDeleteItem, Key: k, Seq: seq, Row: row}
}

func reset() core.Op {
	return core.Op{Kind: core.OpReset}
}

func putState(k core.EntityKey, group string, state []byte) core.Op {
	return core.Op{Kind: core.OpPutSessionState, Key: k, Group: group, State: state}
}

func deleteState(k core.EntityKey, group string) core.Op {
	return core.Op{Kind: core.OpDeleteSessionState, Key: k, Group: group}
}

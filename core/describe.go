package core

import "time"

// Description is an item in its protocol's own words, for people (the
// dashboard's item and dead-letter pages): its properties and, for a dead
// letter, why it died and where it came from. The protocol's Describe hook
// makes it (ProtocolHooks).
type Description struct {
	// Properties are the item's properties as the protocol's clients see
	// them ("MessageID", "content_type", "headers.x-death", "_etag").
	Properties []Setting `json:"properties,omitempty"`
	// DeadLetter is set for a dead letter, nil for any other item.
	DeadLetter *DeadLetterInfo `json:"deadLetter,omitempty"`
	// Payload is the body as the protocol's clients see it, when the item's
	// Body holds more than that (a Service Bus item's Body is the whole
	// encoded AMQP message); nil when the Body is the payload.
	Payload []byte `json:"payload,omitempty"`
}

// DeadLetterInfo says why an item was dead-lettered and where from.
type DeadLetterInfo struct {
	// Reason and Description are the protocol's: "TTLExpiredException" and
	// its DeadLetterErrorDescription, or x-death's "expired" and a sentence.
	Reason      string `json:"reason"`
	Description string `json:"description,omitempty"`
	// Source is the name of the entity (of the same protocol) the item was
	// dead-lettered from, where Resubmit sends it back; "" if unknown.
	Source string `json:"source,omitempty"`
	// Rule is the SEMANTICS.md rule that dead-lettered it, if known.
	Rule string `json:"rule,omitempty"`
}

// Describe returns item it of entity k in its protocol's words (the
// protocol's Describe hook); an empty Description when the protocol has no
// such hook or there is no entity k. It does not hold the engine's lock
// while the hook runs.
func (e *Engine) Describe(k EntityKey, it *Item) Description {
	var fn func(*Entity, *Item) Description
	var ent *entity
	en := locked(e, func() Entity {
		fn, ent = e.protos[k.Protocol].Describe, e.entities[k]
		if ent == nil {
			return Entity{}
		}
		return ent.Entity
	})
	if fn == nil || ent == nil {
		return Description{}
	}
	return e.callDescribe(fn, &en, it)
}

// DeadLetterScan is what DeadLetters found in an entity.
type DeadLetterScan struct {
	// Items are the first dead letters found, in Seq order, each with the
	// reason its expiry is what it is (as Items gives them), and
	// Descriptions[i] is the description of Items[i].
	Items        []Item
	Descriptions []Description
	// Found counts the dead letters among the items examined, Examined the
	// items examined.
	Found, Examined int
	// Complete is true when every item of the entity was examined, so that
	// Found is the entity's count of dead letters.
	Complete bool
}

// DeadLetters examines up to scan items of entity k (0 for all) in Seq
// order with its protocol's Describe hook, which runs inside the engine's
// lock, and returns the first max of those that are dead letters (0 for
// all) with their descriptions. It counts as no use of the entity.
func (e *Engine) DeadLetters(now time.Time, k EntityKey, max, scan int) (DeadLetterScan, error) {
	out, _, err := runEntity(e, now, k, func(ent *entity) (DeadLetterScan, error) {
		return e.deadLetters(ent, max, scan), nil
	})
	return out, err
}

// deadLetters is DeadLetters' operation on ent.
func (e *Engine) deadLetters(ent *entity, max, scan int) DeadLetterScan {
	out := DeadLetterScan{Complete: true}
	fn := e.protos[ent.Protocol].Describe
	if fn == nil {
		return out
	}
	for i, n := 0, ent.all.length(); i < n; i++ {
		x := ent.all.at(i)
		if x.removed {
			continue
		}
		if scan > 0 && out.Examined == scan {
			out.Complete = false
			break
		}
		out.Examined++
		d := e.callDescribe(fn, &ent.Entity, &x.Item)
		if d.DeadLetter == nil {
			continue
		}
		out.Found++
		if max > 0 && len(out.Items) == max {
			continue
		}
		it := x.Item
		it.Reason = ent.reason(x)
		out.Items = append(out.Items, it)
		out.Descriptions = append(out.Descriptions, d)
	}
	return out
}

// CanResubmit reports whether protocol's front-end resubmits dead letters
// (it registered a Resubmit hook): only its entities can hold dead letters
// to list and resubmit.
func (e *Engine) CanResubmit(protocol string) bool {
	return locked(e, func() bool { return e.protos[protocol].Resubmit != nil })
}

package core

import "time"

// State is where an item stands in its entity.
type State uint8

// The states of an item.
const (
	Active    State = iota // available to receivers, expiring by its due time
	Scheduled              // waits for its scheduled enqueue time (SB-4)
	Locked                 // delivered and not yet settled; does not expire (SB-7, RB-6)
	Deferred               // set aside; never expires on its own (SB-9)
)

var stateNames = [...]string{"active", "scheduled", "locked", "deferred"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state's name.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return Errorf(EINVALID, "unknown item state %q", b)
}

// Item is one message or document in an entity. Body and Meta are the
// protocol's, opaque to core.
type Item struct {
	// Seq is the item's sequence number in its entity, assigned by the
	// engine on enqueue and increasing.
	Seq uint64 `json:"seq"`
	// Row is where a Store may keep the item, if not at its Seq (0): a
	// keyed item that replaces another (Put, Change) takes the Row of the
	// one it replaces, or that one's Seq, so that a store can write the
	// replace over the old item rather than delete it in one place and
	// add the new one in another (sqlitestore writes one row rather than
	// two). No two live items of an entity have the same Row, nor a Row
	// that is another's Seq, and a Row is below the item's Seq. The engine
	// sets it and a Store gives it back at Load; front-ends ignore it.
	Row uint64 `json:"-"`
	// Key is an optional key unique within the entity (a Cosmos item's
	// partition key and id).
	Key string `json:"key,omitempty"`
	// Group is an optional partition of the entity's items (a Cosmos
	// item's partition key, a Service Bus message's session id in an
	// entity with sessions): ScanGroup reads one group's items without
	// walking the others.
	Group string `json:"group,omitempty"`
	// Body and Meta are the payload and the protocol's metadata.
	Body []byte `json:"body,omitempty"`
	Meta []byte `json:"meta,omitempty"`
	// State is the item's state.
	State State `json:"state"`
	// EnqueuedAt is when the item became available (for a scheduled item,
	// its scheduled enqueue time once it has passed).
	EnqueuedAt time.Time `json:"enqueuedAt"`
	// ModifiedAt is the last write of the item.
	ModifiedAt time.Time `json:"modifiedAt"`
	// ScheduledAt is the scheduled enqueue time of a scheduled item.
	ScheduledAt time.Time `json:"scheduledAt,omitzero"`
	// TTL is the item's own TTL as the client set it.
	TTL TTL `json:"ttl"`
	// EffectiveTTL is the TTL the policy made of it.
	EffectiveTTL TTL `json:"effectiveTtl"`
	// DueAt is when the item expires; zero if it never does.
	DueAt time.Time `json:"dueAt,omitzero"`
	// Rule is the SEMANTICS.md rule that set DueAt, and Reason says how.
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
	// LockedUntil is when a locked item's lock runs out; zero for a lock
	// that only its holder ends (a RabbitMQ unacked delivery).
	LockedUntil time.Time `json:"lockedUntil,omitzero"`
	// DeliveryCount counts the times the item was handed out locked.
	DeliveryCount uint32 `json:"deliveryCount"`
	// Persistent items of durable entities are kept in the Store.
	Persistent bool `json:"persistent"`
	// Unique are the item's unique values, which its protocol derived
	// from it (a Cosmos DB item's values at its container's unique keys,
	// each prefixed by the item's group): no two live keyed items of an
	// entity hold the same value. A write of an item with a value that
	// another live item of its entity holds is refused with EUNIQUE
	// (unique.go). The store does not keep them: at Recover, the
	// protocol's ProtocolHooks.Unique derives them again.
	Unique []string `json:"unique,omitempty"`
}

// Expired reports whether the item's due time is at or before now.
func (it *Item) Expired(now time.Time) bool {
	return !it.DueAt.IsZero() && !now.Before(it.DueAt)
}

// Action is what happened to an item or entity in an Event.
type Action string

// The actions events record (EM-2).
const (
	ActionExpired      Action = "expired"
	ActionDeadLettered Action = "dead-lettered"
	ActionDeletedIdle  Action = "deleted-idle"
	ActionLockLost     Action = "lock-lost"
	ActionReleased     Action = "released" // a held item passed on when its hold ran out (Policy.OnExpire Release)
)

// Event records one expiry, dead-lettering, release, idle deletion or lock loss, with
// the rule that caused it (EM-2).
type Event struct {
	ID       uint64    `json:"id"`
	Time     time.Time `json:"time"` // when it was applied
	Due      time.Time `json:"due"`  // when it was due
	Protocol string    `json:"protocol"`
	Entity   string    `json:"entity"`
	Item     uint64    `json:"item,omitempty"`    // the item's Seq, 0 for entity events
	ItemKey  string    `json:"itemKey,omitempty"` // the item's Key, if it has one
	Session  string    `json:"session,omitempty"` // the session (Group) a session lock loss is about
	Rule     string    `json:"rule"`
	Action   Action    `json:"action"`
	Reason   string    `json:"reason"`
}

// DeadLetterReason says why an item is being dead-lettered: a code the
// protocol understands ("expired", "rejected", "maxlen", "TTLExpiredException"),
// a description, and the rule behind it.
type DeadLetterReason struct {
	Code        string
	Description string
	Rule        string
}

// DeadLetterFunc moves an item that is being dead-lettered out of entity
// from to where its protocol puts dead letters, using tx. It runs inside the
// engine's critical section: it must not block nor call the Engine, only tx.
// The item is already removed from its entity and handed over as Active,
// unlocked and unscheduled, ready for tx.Enqueue; not putting it anywhere
// drops it.
type DeadLetterFunc func(tx *Tx, from *Entity, it Item, why DeadLetterReason)

package core

import "time"

// Protocol names, as entities and events carry them.
const (
	ServiceBus = "servicebus"
	RabbitMQ   = "rabbitmq"
	Cosmos     = "cosmos"
)

// EntityKey names an entity: its protocol and a name unique within it. Each
// protocol picks its own naming (a RabbitMQ queue is "vhost/queue", a Cosmos
// container "db/container", a Service Bus subscription "topic/Subscriptions/sub").
type EntityKey struct {
	Protocol string `json:"protocol"`
	Name     string `json:"name"`
}

// String returns "protocol:name".
func (k EntityKey) String() string { return k.Protocol + ":" + k.Name }

// Entity is a named container of items with the Policy that governs their
// expiry. Entities without items (a RabbitMQ exchange, a Cosmos database) are
// entities too, so that everything a protocol keeps goes through core.
type Entity struct {
	EntityKey
	// Kind is the protocol's word for it: "queue", "topic", "subscription",
	// "exchange", "database", "container", ...
	Kind string `json:"kind"`
	// Parent is the name of the entity this one belongs to (a subscription's
	// topic, a container's database, a dead-letter queue's queue), or "".
	Parent string `json:"parent,omitempty"`
	// DeadLetterQueue names the entity of the same protocol that holds this
	// one's dead letters, if it has one; its item count shows as this
	// entity's dead-lettered count.
	DeadLetterQueue string `json:"deadLetterQueue,omitempty"`
	// Durable entities and their persistent items are kept in the Store;
	// others live in memory only (a non-durable RabbitMQ queue).
	Durable bool `json:"durable"`
	// Policy is what the adapters made of the protocol's settings.
	Policy Policy `json:"policy"`
	// Settings are the entity's settings in the protocol's own words, for
	// people ("x-message-ttl" = "60000").
	Settings []Setting `json:"settings,omitempty"`
	// Meta is the protocol's own description of the entity, opaque to core.
	Meta []byte `json:"meta,omitempty"`
	// Created is when the entity was created.
	Created time.Time `json:"created"`
	// LastSeq is the highest item sequence number the entity has used.
	LastSeq uint64 `json:"lastSeq"`
	// Handle tells this incarnation of the entity from an earlier or
	// later one of the same key and says whether it is still there: the
	// engine makes one for each entity it creates or loads and keeps
	// nothing of it across starts (handle.go).
	Handle *Handle `json:"-"`
}

// Setting is one entity setting in the protocol's words.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ExpiryBase says what an item's TTL counts from.
type ExpiryBase uint8

const (
	// FromEnqueue counts from the (possibly scheduled) enqueue time (SB-1, RB-1).
	FromEnqueue ExpiryBase = iota
	// FromModified counts from the last modification (CO-1).
	FromModified
)

// ExpireAction says what happens to an item when it expires.
type ExpireAction uint8

const (
	// Drop removes the expired item.
	Drop ExpireAction = iota
	// DeadLetter hands the expired item to the protocol's DeadLetterFunc.
	DeadLetter
	// Release hands the item to the protocol's DeadLetterFunc when its due
	// time comes, as the end of a hold rather than a death: the entity
	// holds items for a while and then passes them on (a RabbitMQ delayed
	// message, RB-15). Its event's action is released, and it counts
	// neither as expired nor as dead-lettered.
	Release
)

// Use is one kind of operation on an entity, for idle deletion (SB-10, RB-8).
type Use uint32

// The uses an entity can see. A Policy's IdleUses says which of them keep the
// entity alive.
const (
	UseSend     Use = 1 << iota // a message or item is sent or published
	UseReceive                  // a message is received (peek-lock, receive-and-delete, basic.get)
	UseBrowse                   // peek / browse
	UseUpdate                   // the entity's settings are updated
	UseSchedule                 // a scheduled message is added or cancelled
	UseDeclare                  // the entity is declared again (passive too)
	UseConsume                  // a consumer attaches
	UseRule                     // a rule or binding is added
	UseChild                    // any operation on a child entity (a topic's subscriptions)
	UseForward                  // auto-forwarding through the entity
)

// Policy is what an entity's protocol settings mean for expiry, produced by
// the adapters. It is plain data, kept with the entity in the Store.
type Policy struct {
	// DefaultTTL applies to items that carry no TTL of their own.
	DefaultTTL TTL `json:"defaultTtl"`
	// MaxTTL is a ceiling on an item's own TTL (SB-2, RB-5); unset for none.
	MaxTTL TTL `json:"maxTtl"`
	// IgnoreItemTTL makes items' own TTLs have no effect (CO-2).
	IgnoreItemTTL bool `json:"ignoreItemTtl,omitempty"`
	// Base says what TTLs count from.
	Base ExpiryBase `json:"base"`
	// BaseResolution truncates the base time before the TTL is added: a
	// Cosmos item's TTL counts from _ts, its last modification in whole
	// seconds (CO-1), so its resolution is one second. Zero keeps it exact.
	BaseResolution time.Duration `json:"baseResolution,omitempty"`
	// Retroactive: a policy change recomputes the expiry of stored items
	// (CO-7); otherwise it applies to items enqueued afterwards (SB-12).
	Retroactive bool `json:"retroactive,omitempty"`
	// OnExpire says what expiry does.
	OnExpire ExpireAction `json:"onExpire"`
	// HeadOnly expires items only when they reach the head of the queue
	// (RB-7): an expired item behind a live one stays until it is at the head.
	HeadOnly bool `json:"headOnly,omitempty"`
	// IdleTTL deletes the entity after that long without a use counted by
	// IdleUses; unset or Forever for never.
	IdleTTL TTL `json:"idleTtl"`
	// IdleUses are the uses that keep the entity alive.
	IdleUses Use `json:"idleUses,omitempty"`
	// IdleOnlyWithoutConsumers runs the idle timer only while the entity has
	// no consumers (RB-8).
	IdleOnlyWithoutConsumers bool `json:"idleOnlyWithoutConsumers,omitempty"`
	// Sessions groups the entity's items into sessions by their Group, the
	// session id (Service Bus RequiresSession): a receiver accepts one
	// session and gets its items only, in Seq order, under the session's
	// lock (AcceptSession, ReceiveSession). Receive, Take, TakeDeferred and
	// locked enqueues do not apply to such an entity, and every item needs
	// a Group. It cannot be changed once the entity exists.
	Sessions bool `json:"sessions,omitempty"`
	// Priorities orders the entity's active items by priority (RabbitMQ's
	// x-max-priority, RB-14): an item's Group is its priority, a decimal
	// from "1" to "255" ("" or anything else is 0), and an item of a higher
	// priority is handed out, expires at the head (HeadOnly) and is dropped
	// for room (Overflow) before every one of a lower priority; within one
	// priority, in Seq order. Not with Sessions.
	Priorities bool `json:"priorities,omitempty"`
	// MaxItems and MaxBytes cap the entity's active items, their count and
	// their bodies' total size; Overflow says how an enqueue keeps to them,
	// under the engine's lock (limits.go). The zero Caps are none.
	MaxItems Cap      `json:"maxItems,omitzero"`
	MaxBytes Cap      `json:"maxBytes,omitzero"`
	Overflow Overflow `json:"overflow,omitempty"`
	// Rules name the SEMANTICS.md rule behind each decision, for events and
	// for the explanation shown with each item.
	Rules RuleIDs `json:"rules"`
}

// RuleIDs names the rules (SEMANTICS.md IDs) an entity's policy applies.
type RuleIDs struct {
	ItemTTL    string `json:"itemTtl,omitempty"`    // the item's own TTL set its expiry
	DefaultTTL string `json:"defaultTtl,omitempty"` // the entity default set it
	Ceiling    string `json:"ceiling,omitempty"`    // the item's TTL was cut to the ceiling
	Never      string `json:"never,omitempty"`      // nothing makes the item expire
	Scheduled  string `json:"scheduled,omitempty"`  // expiry counts from a scheduled enqueue time
	Expire     string `json:"expire,omitempty"`     // the expiry action (drop or dead-letter)
	LockLost   string `json:"lockLost,omitempty"`   // a lock ran out or an item came back from a lock
	Idle       string `json:"idle,omitempty"`       // idle deletion
	Deferred   string `json:"deferred,omitempty"`   // a deferred item found expired when taken
	HeadOnly   string `json:"headOnly,omitempty"`   // items expire only at the head of the queue
	// SessionLock is the rule of a session lock running out (Sessions).
	SessionLock string `json:"sessionLock,omitempty"`
	// Limit is the rule of an item dropped, dead-lettered or refused for
	// the entity's caps (MaxItems, MaxBytes).
	Limit string `json:"limit,omitempty"`
}

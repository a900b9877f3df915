// Package core is lapse's expiring-entity engine: entities with a Policy,
// items with a state, one Clock, one scheduler of due times and the event
// log. It knows no protocol and does no I/O of its own.
//
// # How a protocol front-end uses it
//
// At start, cmd calls Register for each protocol with its ProtocolHooks
// (where dead letters go, whom to wake when items become available, what
// to do when the engine deletes an idle entity), then Recover, which loads
// the Store, hands each front-end its entities (the Recovered hook: it
// rebuilds its own tables from their Meta) and then applies what fell due
// while lapse was down (RB-13), so that dead letters of that time find
// their way.
//
// Every Engine method takes now, read from the one Clock by the caller, and
// first applies everything due up to it, so no call ever sees an expired
// item. What a timer makes happen happens at its due time, even when the
// clock jumped past it: a dead letter is enqueued then, so a chain of
// expiries plays out as if the time had passed. Between calls the expiry
// runner in cmd calls Advance. A front-end:
//
//   - creates entities with Create (Policy from the adapters package, the
//     protocol's own settings in Meta and, for people, Settings), changes
//     them with Update and removes them with Delete;
//   - enqueues with Enqueue (Scheduled for SB-4, Locked for an item handed
//     to a waiting consumer on arrival, RB-4), or with EnqueueHanded when a
//     consumer is ready (the item goes straight to it when nothing waits
//     ahead), and writes keyed items (documents) with Put, or several at
//     once with Write (a transactional batch), reads them with Get and
//     Scan, and one Group of them (a partition) with ScanGroup;
//   - reads a queue's figures with Counts and empties it with Purge; a
//     length limit is its policy (Policy.MaxItems, MaxBytes, Overflow),
//     kept by every enqueue under the engine's lock: the oldest items are
//     dropped to make room, or the new one is refused with EFULL;
//   - hands items out with Receive (locked, with or without a lock
//     expiry) or Take (receive-and-delete, auto-ack), and settles them with
//     Complete, Release (abandon, requeue), Unlock (given back unseen: the
//     delivery does not count), RenewLock, Defer and TakeDeferred,
//     DeadLetter, Remove, and changes an item's Meta with SetMeta;
//   - on an entity with sessions (Policy.Sessions, every item with a
//     Group, its session id), accepts a session for a receiver with
//     AcceptSession (named, or the next free one with an available item),
//     renews and releases it with RenewSession and ReleaseSession, hands
//     out its items with ReceiveSession, TakeSession and
//     TakeDeferredSession, settles them through the holder's handle
//     (Engine.Holder), whose Complete, Release, Unlock, Defer, DeadLetter,
//     RenewLock and SetMeta check the hold in the same critical section,
//     browses one session with PeekSession, keeps its state
//     with GetSessionState and SetSessionState, and lists the sessions with
//     Sessions; a session lock runs out on the engine's clock like any
//     other due time, and SessionAvailable wakes the receivers of a session;
//   - reports uses that renew idle leases with Touch and consumer counts
//     with Consumers; sends, receives and peeks count by themselves.
//
// An entity whose Policy.OnExpire is Release holds its items until their
// due time and then hands each to the DeadLetter hook, as a release rather
// than a death (a RabbitMQ delayed exchange, RB-15).
//
// For people (the dashboard), the Describe hook says what an item is in
// the protocol's words, and whether it is a dead letter and from where
// (Describe, DeadLetters); the Resubmit hook says where a dead letter goes
// back to, and Resubmit and ResubmitAll move it there in one change.
//
// For metrics, Stats returns every entity's counts and its counters of
// items received, delivered, expired and dead-lettered (kept in memory
// only), and Config.ObserveLag is told how late each change a due time
// makes was applied (EM-4).
//
// A call that changes durable state returns a *Commit: acknowledge to the
// client (publisher confirm, accepted disposition, HTTP 201) only after
// Commit.Wait returns nil (EM-3). Body and Meta handed to the engine belong
// to it: never modify them afterwards, nor those of returned items.
//
// Hooks: a DeadLetterFunc runs inside the engine's critical section and may
// only use its Tx; Available, SessionAvailable, SessionLost and Deleted run
// on the protocol's own goroutine, never on that of the engine call that
// made them (hooks.go), so they may take the front-end's locks and call the
// engine while a caller holds those locks across an engine call; WaitHooks
// waits until those queued so far have run.
//
// # Persistence
//
// The engine hands its changes to the Store in the order it makes them
// (Append, inside its lock, never waiting for I/O); a store commits them in
// groups and completes each Commit after its commit. Only durable entities
// and their persistent items are kept, and their sessions' states; locks
// are not (a restarted lapse has every locked item available again, and
// every session free).
package core

// Package servicebus is lapse's Azure Service Bus front-end: an AMQP 1.0
// server that the official SDKs (azservicebus, @azure/service-bus) use
// unmodified with the official emulator's connection string, and the ATOM
// administration API their admin clients call.
//
// # Entities
//
// Queues, topics and subscriptions are core entities (kind "queue",
// "topic", "subscription") named by their path: "orders",
// "events/Subscriptions/audit". Each queue and subscription has two more:
// "<path>/$DeadLetterQueue" and "<path>/$Transfer/$DeadLetterQueue", whose
// messages never expire (SB-8). A subscription's rules live in its Meta.
// Names are case-insensitive, as the service's are. Everything goes
// through core: the adapters package turns an entity's properties into its
// Policy (SB-1..SB-5, SB-10, SB-12) and core applies them; this package
// adds what only Service Bus has: rules and actions (servicebus/sqlfilter),
// auto-forwarding, MaxDeliveryCount and the dead-letter reasons.
//
// # Connections
//
// A connection (conn.go) runs SASL (ANONYMOUS, or PLAIN with a key name and
// key), then reads frames on one goroutine and writes them on another
// (servicebus/amqp is the codec). Authorization is the SDKs' CBS: a
// put-token on $cbs (cbs.go) with a SharedAccessSignature signed with a
// configured key authorizes the connection for the token's audience; a link
// to an entity without one is refused with amqp:unauthorized-access.
//
// Links (link.go) are of three pairs: senders to a queue or topic, whose
// messages are enqueued and accepted once committed (ack.go, EM-3);
// receivers from a queue, subscription or dead-letter queue, one goroutine
// each, handing out messages while they have credit, locked (peek-lock) or
// removed (receive-and-delete); and the request/response links of $cbs and
// <entity>/$management (mgmt.go).
//
// A lock token names its lock without a table: the receiving node's id, the
// message's sequence number and its delivery count (message.go), so a token
// settles its message on any link or the management node, and a token of
// an earlier delivery is a lost lock (SB-7).
package servicebus

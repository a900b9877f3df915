// Package amqp is lapse's own AMQP 1.0 codec, written from the OASIS AMQP 1.0
// specification for the Service Bus front-end, which is an AMQP server.
//
// It covers the type system (§1.6): [AppendValue] and [ReadValue] map AMQP
// values to Go values (ubyte to uint8, symbol to [Symbol], map to the ordered
// [Map], arrays to typed slices, unknown described types to [*Described]);
// the transport performatives (§2.7) and SASL frames (§5.3.3) as structs that
// implement [Performative]; frames (§2.3) with [ReadFrame] and [AppendFrame];
// and messages (§3.2) with [UnmarshalMessage], [Message.MarshalBinary] and the
// cheap section splitter [SplitSections].
//
// Every decoder is bounded: lengths and counts are checked against the bytes
// actually present before anything is allocated, nesting is limited to
// [MaxDepth] levels, and malformed input yields a [*DecodeError], which a
// server reports as amqp:decode-error. Decoded values never alias the input
// buffer, except [Frame.Payload], which is documented as such.
//
// The package does no I/O of its own beyond [ReadFrame] reading from the
// io.Reader it is given, and holds no mutable package-level state.
package amqp

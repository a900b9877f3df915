// Package wire is the AMQP 0-9-1 codec of lapse's RabbitMQ front-end, in
// RabbitMQ's dialect: its extension methods (exchange.bind, basic.nack,
// confirm.select, connection.blocked, connection.update-secret), its field
// table types and its reply codes.
//
// Reading: a Reader cuts a byte stream into Frames (§4.2.3) without
// allocating in the steady state, and refuses a frame over its limit
// (frame-min-size, 4096 octets, until SetMaxFrame) before reading it.
// ReadMethod, ReadContentHeader, DecodeProperties and ReadTable decode a
// frame's payload from a cursor over the bytes. Every length read from the
// wire is checked against the octets actually there before anything is
// allocated, so no decoder allocates more than a small multiple of its
// input.
//
// Writing: AppendFrame, AppendMethodFrame, AppendContent, AppendTable and
// Properties.Append append to a caller's buffer and allocate nothing else
// (a table of more than 32 keys allocates to sort them).
//
// # Errors
//
// A protocol violation comes back as an *Error holding the reply code the
// connection must be closed with. Frame-level faults (a frame over
// frame-max, a bad frame-end octet, an unknown frame type, a heartbeat with
// a payload) are 501 FRAME_ERROR, as RabbitMQ closes with. Arguments,
// content headers, properties and tables that cannot be decoded are 501
// FRAME_ERROR too, as RabbitMQ answers them ("cannot decode"). A method id this codec does not know
// is 540 NOT_IMPLEMENTED (RabbitMQ's reader crashes on it and drops the TCP
// connection without a close; a close with 540 tells the client more). A
// content header whose weight is not zero is 505 UNEXPECTED_FRAME, as
// RabbitMQ's command assembler says.
//
// # Section numbers
//
// § numbers refer to the AMQP 0-9-1 specification (amqp0-9-1.pdf, "4.2 AMQP
// Wire-Level Format"); classes, methods and their fields are those of
// amqp0-9-1.xml plus RabbitMQ's extensions, named by their XML names
// (queue.declare, basic.nack).
package wire

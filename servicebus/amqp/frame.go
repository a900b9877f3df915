package amqp

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// FrameType is the type byte of a frame header (§2.3.1).
type FrameType uint8

// Frame types.
const (
	FrameAMQP FrameType = 0 // an AMQP frame (§2.3.2)
	FrameSASL FrameType = 1 // a SASL frame (§5.3.1)
)

// Protocol headers (§2.2, §5.1) that open a connection: plain AMQP, and SASL
// negotiation before it.
var (
	HeaderAMQP = [8]byte{'A', 'M', 'Q', 'P', 0, 1, 0, 0}
	HeaderSASL = [8]byte{'A', 'M', 'Q', 'P', 3, 1, 0, 0}
)

// MinMaxFrameSize is the smallest max-frame-size a peer may advertise
// (§2.7.1); every peer accepts frames of this size.
const MinMaxFrameSize = 512

// frameHeaderSize is the size of the fixed frame header (§2.3.1).
const frameHeaderSize = 8

// Frame is one AMQP or SASL frame (§2.3).
type Frame struct {
	Type    FrameType
	Channel uint16
	// Body is the performative; nil for an empty frame, which a peer sends
	// to keep the connection alive (§2.4.5).
	Body Performative
	// Payload holds the bytes after the performative, such as a transfer's
	// message data.
	Payload []byte
}

// ReadFrame reads one frame from r. buf is a scratch buffer that may be nil;
// ReadFrame returns it, grown as needed, for the next call. The returned
// Frame's Payload aliases buf, so it is only valid until buf is reused; the
// Body does not alias it.
//
// A frame larger than maxSize, the max-frame-size we advertised (values
// under [MinMaxFrameSize] count as that), fails with a *DecodeError whose
// Framing is set before its body is read or room is made for it, as does a
// header with a bad data offset or frame type. A malformed frame body fails
// with a *DecodeError; a short read fails with the reader's error (io.EOF when r
// ends between frames, io.ErrUnexpectedEOF inside one).
func ReadFrame(r io.Reader, buf []byte, maxSize uint32) (Frame, []byte, error) {
	if cap(buf) < frameHeaderSize {
		buf = make([]byte, 0, 512)
	}
	hdr := buf[:frameHeaderSize]
	if _, err := io.ReadFull(r, hdr); err != nil {
		return Frame{}, buf, err
	}
	size, err := checkFrameHeader(hdr, maxSize)
	if err != nil {
		return Frame{}, buf, err
	}
	if cap(buf) < int(size) {
		grown := make([]byte, size)
		copy(grown, hdr)
		buf = grown
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r, buf[frameHeaderSize:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, buf, err
	}
	f, err := parseFrame(buf)
	return f, buf, err
}

// ParseFrame decodes the one frame at the start of b, as [ReadFrame] does,
// and returns it with the number of bytes it took; the Frame's Payload
// aliases b. Input that ends inside the frame fails with a *DecodeError.
func ParseFrame(b []byte, maxSize uint32) (Frame, int, error) {
	if len(b) < frameHeaderSize {
		return Frame{}, 0, errTruncated()
	}
	size, err := checkFrameHeader(b[:frameHeaderSize], maxSize)
	if err != nil {
		return Frame{}, 0, err
	}
	if uint64(size) > uint64(len(b)) {
		return Frame{}, 0, errTruncated()
	}
	f, err := parseFrame(b[:size])
	if err != nil {
		return Frame{}, 0, err
	}
	return f, int(size), nil
}

// checkFrameHeader validates a frame header against maxSize and returns the
// frame's size.
func checkFrameHeader(hdr []byte, maxSize uint32) (uint32, error) {
	maxSize = max(maxSize, MinMaxFrameSize)
	size := binary.BigEndian.Uint32(hdr)
	doff := uint32(hdr[4]) * 4
	switch {
	case size > maxSize:
		return 0, framingErrorf("frame of %d bytes exceeds the max-frame-size %d", size, maxSize)
	case doff < frameHeaderSize:
		return 0, framingErrorf("frame data offset %d is below the minimum 2", hdr[4])
	case doff > size:
		return 0, framingErrorf("frame data offset %d lies past the frame's %d bytes", doff, size)
	case FrameType(hdr[5]) != FrameAMQP && FrameType(hdr[5]) != FrameSASL:
		return 0, framingErrorf("unknown frame type %d", hdr[5])
	}
	return size, nil
}

// parseFrame decodes a whole frame whose header checkFrameHeader accepted.
func parseFrame(b []byte) (Frame, error) {
	f := Frame{Type: FrameType(b[5]), Channel: binary.BigEndian.Uint16(b[6:])}
	body := b[int(b[4])*4:]
	if len(body) == 0 {
		return f, nil
	}
	p, n, err := ReadPerformative(body)
	if err != nil {
		return Frame{}, err
	}
	sasl := p.Descriptor() >= descSASLMechanisms && p.Descriptor() <= descSASLOutcome
	if sasl != (f.Type == FrameSASL) {
		return Frame{}, decodeErrorf("descriptor 0x%02x in a frame of type %d", p.Descriptor(), f.Type)
	}
	f.Body = p
	if n < len(body) {
		f.Payload = body[n:len(body):len(body)]
	}
	return f, nil
}

// AppendFrame appends a frame (§2.3.1) to dst: the size, a data offset of 2
// (no extended header), typ, channel, the encoded body and payload. A nil
// body makes an empty frame of 8 bytes, and then payload must be empty.
func AppendFrame(dst []byte, typ FrameType, channel uint16, body Performative, payload []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 2, byte(typ), byte(channel>>8), byte(channel))
	if body == nil {
		if len(payload) != 0 {
			return dst[:start], fmt.Errorf("amqp: an empty frame cannot carry a payload")
		}
	} else {
		var err error
		if dst, err = body.AppendTo(dst); err != nil {
			return dst[:start], err
		}
		dst = append(dst, payload...)
	}
	size := len(dst) - start
	if uint64(size) > math.MaxUint32 {
		return dst[:start], fmt.Errorf("amqp: frame of %d bytes is too large", size)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	return dst, nil
}

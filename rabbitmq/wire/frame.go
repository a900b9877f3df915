package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
)

// Frame types, the frame-end octet (§4.2.3) and frame-min-size, the
// frame-max every peer accepts before connection.tune-ok (amqp0-9-1.xml).
const (
	FrameMethod    = 1
	FrameHeader    = 2
	FrameBody      = 3
	FrameHeartbeat = 8
	FrameEnd       = 0xCE
	FrameMinSize   = 4096
)

// ProtocolHeader is the protocol header a client opens with (§4.2.2):
// "AMQP", 0, then version 0-9-1.
var ProtocolHeader = [8]byte{'A', 'M', 'Q', 'P', 0, 0, 9, 1}

// frameOverhead is what a frame adds to its payload: the 7-octet header
// (type, channel, size) and the frame-end octet (§4.2.3).
const frameOverhead = 8

// frameSizeFudge is how far past frame-max RabbitMQ still accepts a frame
// (rabbit_reader's FRAME_SIZE_FUDGE): clients commonly forget the frame
// overhead, so a frame whose payload is frame-max octets passes.
const frameSizeFudge = 8

// readBufferSize is a Reader's first buffer. It holds many small frames, so
// one read from the connection serves many ReadFrame calls.
const readBufferSize = 32 << 10

// waitBufferSize is what a pooled Reader reads into while it waits for a
// frame: a small frame (a method without content, a heartbeat) arrives in
// it whole.
const waitBufferSize = 512

// contentHeaderSize is the fixed part of a content header payload: class
// id, weight and body size (§4.2.6.1).
const contentHeaderSize = 12

// Frame is one frame (§4.2.3). Payload aliases the Reader's buffer and is
// valid only until the next call on the Reader, which may give the buffer
// back to its pool.
type Frame struct {
	Type    uint8
	Channel uint16
	Payload []byte
}

// Reader reads frames from a connection through one internal buffer that it
// reuses, so ReadFrame allocates only when a frame is larger than any
// before it, and never past the frame limit.
type Reader struct {
	rd   io.Reader
	buf  []byte
	r, w int    // buf[r:w] is read but not yet returned
	max  uint64 // the largest whole frame accepted
	err  *Error // a protocol fault: the stream is out of step for good

	// A pooled Reader's buffer is small while nothing read is left to
	// return, else lent (from pool) or one of its own for a frame larger
	// than the pool's buffers.
	pool  *BufferPool
	lent  *[]byte
	small [waitBufferSize]byte
}

// BufferPool lends pooled Readers their read-ahead buffers.
type BufferPool struct{ p sync.Pool }

func (p *BufferPool) get() *[]byte {
	if b, ok := p.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, readBufferSize)
	return &b
}

// Buffered is how many bytes were read from the stream and not yet
// returned in a frame: more the peer sent already.
func (r *Reader) Buffered() int { return r.w - r.r }

// NewReader returns a Reader of rd whose frame limit is FrameMinSize, the
// spec's frame-max before tuning and RabbitMQ's initial_frame_max default.
func NewReader(rd io.Reader) *Reader {
	r := &Reader{rd: rd, buf: make([]byte, readBufferSize)}
	r.SetMaxFrame(0)
	return r
}

// NewPooledReader returns a Reader like NewReader whose read-ahead buffer
// comes from pool while frames arrive and goes back to it whenever nothing
// read is left to return: a Reader waiting for its next frame holds only
// a buffer of 512 bytes of its own (issue 25.8).
func NewPooledReader(rd io.Reader, pool *BufferPool) *Reader {
	r := &Reader{rd: rd, pool: pool}
	r.buf = r.small[:]
	r.SetMaxFrame(0)
	return r
}

// release gives the lent buffer back, and one of the Reader's own for a
// large frame goes, when nothing read is left to return; then the Reader
// waits with its small buffer. Only a pooled Reader does.
func (r *Reader) release() {
	if r.pool == nil || r.r != r.w {
		return
	}
	if r.lent != nil {
		r.pool.p.Put(r.lent)
		r.lent = nil
	}
	r.buf, r.r, r.w = r.small[:], 0, 0
}

// grow makes room for a frame of n octets, more than the buffer holds,
// with what is buffered at the front. A pooled Reader takes a buffer from
// the pool, or for a frame larger than those, one of the frame's size;
// another Reader doubles its buffer (up to the frame limit), or more if
// the frame needs it.
func (r *Reader) grow(n int) {
	var nb []byte
	var lent *[]byte
	switch {
	case r.pool != nil && n <= readBufferSize:
		lent = r.pool.get()
		nb = *lent
	case r.pool != nil:
		nb = make([]byte, n)
	default:
		nb = make([]byte, max(n, min(2*len(r.buf), int(min(r.max, math.MaxInt32)))))
	}
	r.w = copy(nb, r.buf[r.r:r.w])
	r.r = 0
	if r.lent != nil {
		r.pool.p.Put(r.lent)
	}
	r.buf, r.lent = nb, lent
}

// SetMaxFrame sets the frame limit to n, the frame-max of connection.tune-ok,
// which counts a whole frame: header, payload and frame-end. Like RabbitMQ,
// ReadFrame tolerates 8 octets more, so a frame whose payload is n octets
// passes. 0, and anything under FrameMinSize, sets FrameMinSize: a
// tune-ok frame-max of 0 means "no limit", so a server should pass its own
// frame-max (RabbitMQ's is 131072) rather than 0.
func (r *Reader) SetMaxFrame(n uint32) {
	r.max = uint64(max(n, FrameMinSize)) + frameSizeFudge
}

// ReadProtocolHeader reads the 8-octet protocol header (§4.2.2) that starts
// a connection, through the Reader's buffer. The caller compares it with
// ProtocolHeader.
func (r *Reader) ReadProtocolHeader() ([8]byte, error) {
	var h [8]byte
	if err := r.fill(len(h)); err != nil {
		return h, err
	}
	copy(h[:], r.buf[r.r:])
	r.r += len(h)
	return h, nil
}

// ReadFrame reads one frame. It checks the announced size against the frame
// limit before reading or allocating anything for the payload. A frame over
// the limit, an unknown frame type, a frame-end octet other than 0xCE and a
// heartbeat with a payload are an *Error with code 501 FRAME_ERROR; after
// one, the stream cannot be resynchronised and every later call returns the
// same error. I/O errors are returned as they are, except that the end of
// the stream within a frame is io.ErrUnexpectedEOF; after a timeout the
// next call resumes where the frame left off.
func (r *Reader) ReadFrame() (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	r.release()
	if err := r.fill(7); err != nil {
		return Frame{}, err
	}
	h := r.buf[r.r : r.r+7]
	typ := h[0]
	channel := binary.BigEndian.Uint16(h[1:])
	size := binary.BigEndian.Uint32(h[3:])
	switch typ {
	case FrameMethod, FrameHeader, FrameBody, FrameHeartbeat:
	default:
		return Frame{}, r.fatal(fmt.Sprintf("type %d, channel %d: unknown frame type", typ, channel))
	}
	total := uint64(size) + frameOverhead
	if total > r.max || total > math.MaxInt {
		// RabbitMQ's words: the payload size announced and the largest
		// payload frame-max leaves room for.
		return Frame{}, r.fatal(fmt.Sprintf("type %d, all octets = <<>>: {frame_too_large,%d,%d}",
			typ, size, r.max-frameSizeFudge-frameOverhead))
	}
	if err := r.fill(int(total)); err != nil {
		return Frame{}, err
	}
	f := r.buf[r.r : r.r+int(total)]
	if end := f[total-1]; end != FrameEnd {
		return Frame{}, r.fatal(fmt.Sprintf("type %d, channel %d: frame-end octet 0x%02X instead of 0xCE", typ, channel, end))
	}
	if typ == FrameHeartbeat && size != 0 {
		return Frame{}, r.fatal(fmt.Sprintf("channel %d: heartbeat frame with a %d-octet payload", channel, size))
	}
	r.r += int(total)
	return Frame{Type: typ, Channel: channel, Payload: f[7 : 7+size : 7+size]}, nil
}

// fatal records a protocol fault, after which the stream is out of step.
func (r *Reader) fatal(text string) *Error {
	r.err = &Error{Code: FrameError, Text: text}
	return r.err
}

// fill reads until buf[r:w] holds at least n octets, moving what is
// buffered to the front, or growing the buffer to the frame's size, when
// they would not fit behind it.
func (r *Reader) fill(n int) error {
	if r.w-r.r >= n {
		return nil
	}
	if len(r.buf)-r.r < n {
		if n > len(r.buf) {
			r.grow(n)
		} else {
			r.w = copy(r.buf, r.buf[r.r:r.w])
			r.r = 0
		}
	}
	for empty := 0; r.w-r.r < n; {
		m, err := r.rd.Read(r.buf[r.w:])
		r.w += m
		if r.w-r.r >= n {
			return nil
		}
		if err != nil {
			if err == io.EOF && r.w > r.r {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if m > 0 {
			empty = 0
		} else if empty++; empty >= 100 {
			return io.ErrNoProgress
		}
	}
	return nil
}

// AppendFrame appends a whole frame (§4.2.3): type, channel, payload size,
// payload and frame-end.
func AppendFrame(dst []byte, typ uint8, channel uint16, payload []byte) []byte {
	dst = append(dst, typ, byte(channel>>8), byte(channel))
	dst = appendU32(dst, uint32(len(payload)))
	dst = append(dst, payload...)
	return append(dst, FrameEnd)
}

// AppendMethodFrame appends a method frame (§4.2.4) carrying m: its class
// and method ids, then its arguments.
func AppendMethodFrame(dst []byte, channel uint16, m Method) []byte {
	start := len(dst)
	dst = append(dst, FrameMethod, byte(channel>>8), byte(channel), 0, 0, 0, 0)
	class, method := m.ClassMethod()
	dst = appendU16(dst, class)
	dst = appendU16(dst, method)
	dst = m.appendArgs(dst)
	binary.BigEndian.PutUint32(dst[start+3:], uint32(len(dst)-start-7))
	return append(dst, FrameEnd)
}

// AppendContent appends a content header frame (§4.2.6.1: class id, weight
// 0, body size, then props, the property flags and list that
// Properties.Append encodes) and the body frames (§4.2.6.2), cut so that
// no frame exceeds frameMax octets, the frame overhead of 8 included. 0
// means no limit; other values under FrameMinSize count as FrameMinSize.
// An empty body gives no body frame.
func AppendContent(dst []byte, channel uint16, classID uint16, props []byte, body []byte, frameMax uint32) []byte {
	chunk := uint64(math.MaxUint32)
	if frameMax != 0 {
		chunk = uint64(max(frameMax, FrameMinSize)) - frameOverhead
	}
	frames := (uint64(len(body)) + chunk - 1) / chunk
	dst = slices.Grow(dst, frameOverhead+contentHeaderSize+len(props)+len(body)+int(frames)*frameOverhead)

	dst = append(dst, FrameHeader, byte(channel>>8), byte(channel))
	dst = appendU32(dst, uint32(contentHeaderSize+len(props)))
	dst = appendU16(dst, classID)
	dst = append(dst, 0, 0) // weight
	dst = appendU64(dst, uint64(len(body)))
	dst = append(dst, props...)
	dst = append(dst, FrameEnd)
	for len(body) > 0 {
		n := int(min(uint64(len(body)), chunk))
		dst = AppendFrame(dst, FrameBody, channel, body[:n])
		body = body[n:]
	}
	return dst
}

// ContentHeader is a decoded content header frame payload (§4.2.6.1).
// Props is the raw property flags and list, aliasing the payload: pass it
// to DecodeProperties, or on to AppendContent untouched.
type ContentHeader struct {
	ClassID  uint16
	BodySize uint64
	Props    []byte
}

// ReadContentHeader decodes a content header frame payload. A payload too
// short for the class id, weight, body size and property flags is an
// *Error with code 501 FRAME_ERROR; a weight other than 0 is 505
// UNEXPECTED_FRAME, as RabbitMQ answers it. The property list is not
// decoded here (RabbitMQ decodes it lazily too).
func ReadContentHeader(payload []byte) (ContentHeader, error) {
	if len(payload) < contentHeaderSize+2 {
		return ContentHeader{}, malformed("content header", fmt.Sprintf("%d octets, fewer than 14", len(payload)))
	}
	if w := binary.BigEndian.Uint16(payload[2:]); w != 0 {
		return ContentHeader{}, &Error{Code: UnexpectedFrame, Text: fmt.Sprintf("content header with weight %d", w)}
	}
	return ContentHeader{
		ClassID:  binary.BigEndian.Uint16(payload),
		BodySize: binary.BigEndian.Uint64(payload[4:]),
		Props:    payload[contentHeaderSize:len(payload):len(payload)],
	}, nil
}

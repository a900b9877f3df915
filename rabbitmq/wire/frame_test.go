package wire

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// sampleFrames returns a few frames of every type, as one byte stream.
func sampleFrames() ([]Frame, []byte) {
	body := bytes.Repeat([]byte("0123456789"), 1000)
	frames := []Frame{
		{Type: FrameMethod, Channel: 0, Payload: AppendMethodFrame(nil, 0, &ConnectionTuneOk{ChannelMax: 1, FrameMax: 4096})[7:19]},
		{Type: FrameHeartbeat, Channel: 0, Payload: []byte{}},
		{Type: FrameMethod, Channel: 65535, Payload: []byte{0, 60, 0, 40, 0, 0, 0, 1, 'q', 0}},
		{Type: FrameHeader, Channel: 65535, Payload: append([]byte{0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0x27, 0x10}, 0, 0)},
		{Type: FrameBody, Channel: 65535, Payload: body[:4088]},
		{Type: FrameBody, Channel: 65535, Payload: body[4088:]},
	}
	var stream []byte
	for _, f := range frames {
		stream = AppendFrame(stream, f.Type, f.Channel, f.Payload)
	}
	return frames, stream
}

// readAll reads frames from r until an error, copying their payloads.
func readAll(r *Reader) ([]Frame, error) {
	var got []Frame
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return got, err
		}
		f.Payload = append([]byte{}, f.Payload...)
		got = append(got, f)
	}
}

func TestReadFrame(t *testing.T) {
	want, stream := sampleFrames()
	for name, rd := range map[string]func() io.Reader{
		"Whole":      func() io.Reader { return bytes.NewReader(stream) },
		"OneByte":    func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"Half":       func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
		"DataErr":    func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) },
		"SplitInTwo": func() io.Reader { return io.MultiReader(bytes.NewReader(stream[:9]), bytes.NewReader(stream[9:])) },
		"EmptyReads": func() io.Reader { return &stutterReader{data: stream} },
	} {
		for _, pooled := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "Pooled"}[pooled], func(t *testing.T) {
				r := newTestReader(rd(), pooled)
				r.SetMaxFrame(8192)
				got, err := readAll(r)
				if err != io.EOF {
					t.Errorf("last error %v, want io.EOF", err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// newTestReader returns a Reader of rd, pooled or not.
func newTestReader(rd io.Reader, pooled bool) *Reader {
	if pooled {
		return NewPooledReader(rd, &BufferPool{})
	}
	return NewReader(rd)
}

// stutterReader returns 0, nil before every octet it gives.
type stutterReader struct {
	data []byte
	odd  bool
}

func (s *stutterReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	if s.odd = !s.odd; s.odd {
		return 0, nil
	}
	n := copy(p[:1], s.data)
	s.data = s.data[n:]
	return n, nil
}

func TestReadFrameEOF(t *testing.T) {
	_, stream := sampleFrames()
	for _, pooled := range []bool{false, true} {
		for cut := 1; cut < 30; cut++ {
			r := newTestReader(bytes.NewReader(stream[:cut]), pooled)
			_, err := readAll(r)
			want := io.ErrUnexpectedEOF
			if cut == 20 || cut == 28 { // exactly after the first or second frame
				want = io.EOF
			}
			if err != want {
				t.Errorf("stream cut at %d (pooled %v): %v, want %v", cut, pooled, err, want)
			}
		}
	}
}

// panicReader fails the test if the Reader reads past what it was given.
type panicReader struct{ tb testing.TB }

func (p panicReader) Read([]byte) (int, error) {
	p.tb.Fatal("Reader read the payload of a frame it should have rejected")
	return 0, nil
}

func TestReadFrameRejectsOversizedBeforeReading(t *testing.T) {
	header := []byte{FrameBody, 0, 1, 0x40, 0, 0, 0} // a 1 GiB body frame
	r := NewReader(io.MultiReader(bytes.NewReader(header), panicReader{t}))
	r.SetMaxFrame(131072)
	_, err := r.ReadFrame()
	if !isCode(err, FrameError) || !strings.Contains(err.Error(), "{frame_too_large,1073741824,131064}") {
		t.Fatalf("ReadFrame = %v, want FRAME_ERROR", err)
	}
	if len(r.buf) != readBufferSize {
		t.Errorf("buffer grew to %d octets", len(r.buf))
	}
	if _, again := r.ReadFrame(); again != err {
		t.Errorf("after a frame error ReadFrame = %v, want the same error", again)
	}
}

func TestReadFrameLimit(t *testing.T) {
	frame := func(payload int) []byte { return AppendFrame(nil, FrameBody, 1, make([]byte, payload)) }
	for _, tc := range []struct {
		name    string
		max     uint32
		payload int
		ok      bool
	}{
		{"BeforeTuneExactly4096", 0, 4096 - 8, true},
		{"BeforeTuneFudgeOf8", 0, 4096, true},
		{"BeforeTunePastFudge", 0, 4097, false},
		{"TunedExactly", 131072, 131072 - 8, true},
		{"TunedFudge", 131072, 131072, true},
		{"TunedPastFudge", 131072, 131073, false},
		{"UnderMinimumMeansMinimum", 100, 4096, true},
		{"UnderMinimumPastFudge", 100, 4097, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(frame(tc.payload)))
			if tc.max != 0 {
				r.SetMaxFrame(tc.max)
			}
			f, err := r.ReadFrame()
			if tc.ok && (err != nil || len(f.Payload) != tc.payload) {
				t.Errorf("ReadFrame = %d octets, %v; want the frame", len(f.Payload), err)
			}
			if !tc.ok && !isCode(err, FrameError) {
				t.Errorf("ReadFrame = %v, want FRAME_ERROR", err)
			}
			if len(r.buf) > int(max(tc.max, FrameMinSize))+frameSizeFudge && len(r.buf) > readBufferSize {
				t.Errorf("buffer of %d octets is over the limit", len(r.buf))
			}
		})
	}
}

func TestReadFrameProtocolFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream []byte
		text   string
	}{
		{"BadFrameEnd", []byte{FrameMethod, 0, 0, 0, 0, 0, 4, 0, 10, 0, 11, 0xCD}, "frame-end octet 0xCD"},
		{"UnknownType", []byte{4, 0, 0, 0, 0, 0, 0, FrameEnd}, "unknown frame type"},
		{"TypeZero", []byte{0, 0, 0, 0, 0, 0, 0, FrameEnd}, "unknown frame type"},
		{"HeartbeatWithPayload", []byte{FrameHeartbeat, 0, 0, 0, 0, 0, 1, 'x', FrameEnd}, "heartbeat frame with a 1-octet payload"},
		{"HTTPRequest", []byte("GET / HTTP/1.1\r\n\r\n"), "unknown frame type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tc.stream))
			_, err := r.ReadFrame()
			if !isCode(err, FrameError) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("ReadFrame = %v, want FRAME_ERROR containing %q", err, tc.text)
			}
		})
	}
}

// timeoutReader gives its chunks one by one, each after a timeout error.
type timeoutReader struct {
	chunks   [][]byte
	timedOut bool
}

func (t *timeoutReader) Read(p []byte) (int, error) {
	if len(t.chunks) == 0 {
		return 0, io.EOF
	}
	if !t.timedOut {
		t.timedOut = true
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(p, t.chunks[0])
	if t.chunks[0] = t.chunks[0][n:]; len(t.chunks[0]) == 0 {
		t.chunks, t.timedOut = t.chunks[1:], false
	}
	return n, nil
}

func TestReadFrameResumesAfterTimeout(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		t.Run(map[bool]string{false: "Own", true: "Pooled"}[pooled], func(t *testing.T) {
			testReadFrameResumesAfterTimeout(t, pooled)
		})
	}
}

func testReadFrameResumesAfterTimeout(t *testing.T, pooled bool) {
	want, stream := sampleFrames()
	rd := &timeoutReader{chunks: [][]byte{stream[:3], stream[3:25], stream[25:5000], stream[5000:]}}
	r := newTestReader(rd, pooled)
	var got []Frame
	timeouts := 0
	for {
		f, err := r.ReadFrame()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			timeouts++
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Payload = append([]byte{}, f.Payload...)
		got = append(got, f)
		r.SetMaxFrame(8192)
	}
	if timeouts != 4 {
		t.Errorf("%d timeouts, want 4", timeouts)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadProtocolHeader(t *testing.T) {
	stream := append(ProtocolHeader[:], AppendMethodFrame(nil, 0, &ConnectionStartOk{Mechanism: "PLAIN"})...)
	r := NewReader(iotest.OneByteReader(bytes.NewReader(stream)))
	h, err := r.ReadProtocolHeader()
	if err != nil || h != ProtocolHeader {
		t.Fatalf("ReadProtocolHeader = %q, %v", h, err)
	}
	f, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMethod(f.Payload); err != nil || m.(*ConnectionStartOk).Mechanism != "PLAIN" {
		t.Errorf("method after the header = %#v, %v", m, err)
	}
}

func TestReadFrameSteadyStateAllocatesNothing(t *testing.T) {
	_, stream := sampleFrames()
	for _, pooled := range []bool{false, true} {
		r := newTestReader(&loopReader{data: stream}, pooled)
		r.SetMaxFrame(8192)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := r.ReadFrame(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ReadFrame (pooled %v) allocates %v times per frame", pooled, allocs)
		}
	}
}

// issue 25.8: a pooled Reader that has returned every frame it read waits
// for the next with its small buffer alone: the lent one went back, and
// one made for a frame larger than the pool's buffers went too. A frame
// that fits in the small buffer is read without a lent one.
func TestPooledReaderLetsGoOfItsBufferWhenIdle(t *testing.T) {
	_, stream := sampleFrames()
	big := AppendFrame(nil, FrameBody, 1, bytes.Repeat([]byte{7}, 100_000))
	small := AppendFrame(nil, FrameHeartbeat, 0, nil)
	for _, tc := range []struct {
		name   string
		input  []byte
		frames int
		lends  bool // a buffer is lent while the last frame is returned
	}{
		{"Sample", stream, 6, true},
		{"LargerThanThePool", big, 1, false},
		{"Small", small, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewPooledReader(&timeoutReader{chunks: [][]byte{tc.input}}, &BufferPool{})
			r.SetMaxFrame(131072)
			var last Frame
			for n := 0; n < tc.frames; n++ {
				f, err := r.ReadFrame()
				if errors.Is(err, os.ErrDeadlineExceeded) {
					n--
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				last = f
			}
			if got := r.lent != nil; got != tc.lends {
				t.Errorf("a lent buffer while the last frame is returned: %v, want %v", got, tc.lends)
			}
			if tc.name == "LargerThanThePool" && (len(last.Payload) != 100_000 || len(r.buf) != len(big)) {
				t.Errorf("payload of %d octets in a buffer of %d, want 100000 in one of %d", len(last.Payload), len(r.buf), len(big))
			}
			// The next call finds nothing and waits with the small buffer.
			if _, err := r.ReadFrame(); err != io.EOF {
				t.Fatalf("ReadFrame after the last frame: %v, want io.EOF", err)
			}
			if r.lent != nil || len(r.buf) != waitBufferSize {
				t.Errorf("waiting with a buffer of %d octets (lent %v), want the small one of %d", len(r.buf), r.lent != nil, waitBufferSize)
			}
		})
	}
}

// loopReader repeats data for ever, in reads of at most 1000 octets.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), 1000)], l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

func TestReaderGrowsOnlyToTheFrame(t *testing.T) {
	big := AppendFrame(nil, FrameBody, 1, make([]byte, 100_000))
	r := NewReader(bytes.NewReader(big))
	r.SetMaxFrame(131072)
	if _, err := r.ReadFrame(); err != nil {
		t.Fatal(err)
	}
	if len(r.buf) > 131072+frameSizeFudge {
		t.Errorf("buffer of %d octets, over the frame limit", len(r.buf))
	}
}

func TestAppendContent(t *testing.T) {
	props := (&Properties{ContentType: "text/plain"}).Append(nil)
	for _, tc := range []struct {
		name     string
		body     int
		frameMax uint32
		frames   []int // body frame payload sizes
	}{
		{"EmptyBodyNoBodyFrame", 0, 4096, nil},
		{"OneOctet", 1, 4096, []int{1}},
		{"ExactlyOneFrame", 4088, 4096, []int{4088}},
		{"OneOver", 4089, 4096, []int{4088, 1}},
		{"ThreeFrames", 3 * 4088, 4096, []int{4088, 4088, 4088}},
		{"NoLimit", 300_000, 0, []int{300_000}},
		{"UnderMinimumMeansMinimum", 5000, 10, []int{4088, 912}},
		{"Tuned", 300_000, 131072, []int{131064, 131064, 37872}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := make([]byte, tc.body)
			for i := range body {
				body[i] = byte(i)
			}
			out := AppendContent([]byte("x"), 3, ClassBasic, props, body, tc.frameMax)
			if out[0] != 'x' {
				t.Fatal("AppendContent overwrote dst")
			}
			r := NewReader(bytes.NewReader(out[1:]))
			r.SetMaxFrame(1 << 30)
			f, err := r.ReadFrame()
			if err != nil || f.Type != FrameHeader || f.Channel != 3 {
				t.Fatalf("header frame: %+v, %v", f, err)
			}
			h, err := ReadContentHeader(f.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ContentHeader{ClassID: ClassBasic, BodySize: uint64(tc.body), Props: props}, h); diff != "" {
				t.Errorf("content header (-want +got):\n%s", diff)
			}
			var sizes []int
			var got []byte
			for {
				f, err := r.ReadFrame()
				if err == io.EOF {
					break
				}
				if err != nil || f.Type != FrameBody || f.Channel != 3 {
					t.Fatalf("body frame: %v, %v", f.Type, err)
				}
				if tc.frameMax != 0 && len(f.Payload)+8 > int(max(tc.frameMax, FrameMinSize)) {
					t.Errorf("body frame of %d octets is over frame-max", len(f.Payload)+8)
				}
				sizes = append(sizes, len(f.Payload))
				got = append(got, f.Payload...)
			}
			if diff := cmp.Diff(tc.frames, sizes); diff != "" {
				t.Errorf("body frame sizes (-want +got):\n%s", diff)
			}
			if !bytes.Equal(got, body) {
				t.Error("body octets differ")
			}
		})
	}
}

func TestAppendAllocatesNothingElse(t *testing.T) {
	props := allProperties()
	raw := props.Append(nil)
	body := make([]byte, 10_000)
	dst := make([]byte, 0, 64<<10)
	deliver := &BasicDeliver{ConsumerTag: "ctag", DeliveryTag: 1, Exchange: "ex", RoutingKey: "rk"}
	declare := &QueueDeclare{Queue: "q", Arguments: map[string]any{"x-message-ttl": int32(1000), "x-queue-type": "quorum"}}
	allocs := testing.AllocsPerRun(100, func() {
		dst = AppendMethodFrame(dst[:0], 1, deliver)
		dst = AppendContent(dst, 1, ClassBasic, raw, body, 4096)
		dst = AppendMethodFrame(dst, 1, declare)
		dst = props.Append(dst)
	})
	if allocs != 0 {
		t.Errorf("appending allocates %v times", allocs)
	}
}

func TestReadContentHeaderFaults(t *testing.T) {
	good := []byte{0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0}
	if h, err := ReadContentHeader(good); err != nil || h.BodySize != 5 || h.ClassID != 60 {
		t.Errorf("ReadContentHeader(good) = %+v, %v", h, err)
	}
	for n := range len(good) {
		if _, err := ReadContentHeader(good[:n]); !isCode(err, malformedCode) {
			t.Errorf("ReadContentHeader of %d octets = %v, want %d", n, err, malformedCode)
		}
	}
	weighted := append([]byte{}, good...)
	weighted[3] = 1
	if _, err := ReadContentHeader(weighted); !isCode(err, UnexpectedFrame) {
		t.Errorf("ReadContentHeader(weight 1) = %v, want UNEXPECTED_FRAME", err)
	}
}

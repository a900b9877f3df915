package difftest

import (
	"fmt"
	"net"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// Raw is a connection a scenario drives frame by frame on lapse's codec,
// for what amqp091-go hides or does for the scenario: the order of the
// frames the broker sends, methods a client sends while a close is under
// way, and the order of the fields of a table (amqp091-go decodes tables
// into maps). Its transcript lines start with "raw".
type Raw struct {
	s  *S
	nc net.Conn
	r  *wire.Reader
}

// Raw opens a connection: the handshake, heartbeats off, frame-max 131072,
// the connection named like those of Conn. It records nothing.
func (s *S) Raw() *Raw {
	s.tb.Helper()
	u, err := url.Parse(s.target.URL)
	if err != nil {
		s.tb.Fatalf("AMQP URL of %s: %v", s.target.Name, err)
	}
	nc, err := net.DialTimeout("tcp", u.Host, arrivalTimeout)
	if err != nil {
		s.tb.Fatalf("connect to %s: %v", s.target.Name, err)
	}
	r := &Raw{s: s, nc: nc, r: wire.NewReader(nc)}
	s.raws = append(s.raws, r)
	pass, _ := u.User.Password()
	vhost := strings.TrimPrefix(u.Path, "/")
	if vhost == "" {
		vhost = "/"
	}
	r.write(wire.ProtocolHeader[:])
	r.expect(0, &wire.ConnectionStart{})
	r.Send(0, &wire.ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00" + u.User.Username() + "\x00" + pass,
		Locale: "en_US", ClientProperties: map[string]any{
			"connection_name": s.prefix + "raw" + fmt.Sprint(len(s.raws)),
			"capabilities":    map[string]any{"consumer_cancel_notify": true, "authentication_failure_close": true},
		}})
	r.expect(0, &wire.ConnectionTune{})
	r.r.SetMaxFrame(131072)
	r.Send(0, &wire.ConnectionTuneOk{ChannelMax: 2047, FrameMax: 131072})
	r.Send(0, &wire.ConnectionOpen{VirtualHost: vhost})
	r.expect(0, &wire.ConnectionOpenOk{})
	return r
}

// Content is a message for Raw.Send: a content header and body after the
// basic.publish before it.
type Content struct {
	Props wire.Properties
	Body  string
}

// write sends octets, failing the scenario when the connection is gone.
func (r *Raw) write(b []byte) {
	r.s.tb.Helper()
	r.nc.SetWriteDeadline(time.Now().Add(arrivalTimeout))
	if _, err := r.nc.Write(b); err != nil {
		r.s.tb.Fatalf("raw write: %v", err)
	}
}

// Send writes methods (and contents) on channel ch in one write, so that the
// broker reads them back to back, and records them.
func (r *Raw) Send(ch uint16, frames ...any) {
	r.s.tb.Helper()
	var b []byte
	var names []string
	for _, f := range frames {
		switch f := f.(type) {
		case wire.Method:
			b = wire.AppendMethodFrame(b, ch, f)
			names = append(names, formatMethod(f))
		case Content:
			b = wire.AppendContent(b, ch, wire.ClassBasic, f.Props.Append(nil), []byte(f.Body), 131072)
			names = append(names, fmt.Sprintf("content body=%q", f.Body))
		default:
			r.s.tb.Fatalf("raw send: %T is neither a method nor a content", f)
		}
	}
	r.write(b)
	if ch != 0 || len(frames) != 1 || !isHandshake(frames[0]) {
		r.s.Note("raw send ch=%d: %s", ch, strings.Join(names, ", "))
	}
}

// SendHeader writes the 7-octet header of a frame (§4.2.3) of type typ on
// channel ch announcing a payload of size octets, and nothing after it, and
// records it: the broker must judge the frame by its header alone.
func (r *Raw) SendHeader(typ uint8, ch uint16, size uint32) {
	r.s.tb.Helper()
	r.write([]byte{typ, byte(ch >> 8), byte(ch), byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)})
	r.s.Note("raw send ch=%d: frame header type=%d size=%d", ch, typ, size)
}

// isHandshake reports whether m belongs to the handshake, which Raw does
// not record.
func isHandshake(m any) bool {
	switch m.(type) {
	case *wire.ConnectionStartOk, *wire.ConnectionTuneOk, *wire.ConnectionOpen:
		return true
	}
	return false
}

// Recv records the next n methods the broker sends (a content after a
// basic.get-ok, deliver or return counts with its method), on whatever
// channel. It fails the scenario when they do not come within
// arrivalTimeout.
func (r *Raw) Recv(n int) {
	r.s.tb.Helper()
	for range n {
		ch, m, c := r.next()
		line := fmt.Sprintf("raw recv ch=%d: %s", ch, formatMethod(m))
		if c != nil {
			line += " " + c.String()
		}
		r.s.Note("%s", line)
	}
}

// Quiet records that the broker sends nothing within quietPeriod, or what it
// sent.
func (r *Raw) Quiet() {
	r.s.tb.Helper()
	r.nc.SetReadDeadline(time.Now().Add(quietPeriod))
	f, err := r.r.ReadFrame()
	r.nc.SetReadDeadline(time.Time{})
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			r.s.Note("raw recv: nothing")
			return
		}
		r.s.tb.Fatalf("raw read: %v", err)
	}
	m, err := wire.ReadMethod(f.Payload)
	if err != nil {
		r.s.tb.Fatalf("raw read: frame type %d on channel %d: %v", f.Type, f.Channel, err)
	}
	r.s.Note("raw recv ch=%d: %s", f.Channel, formatMethod(m))
}

// Close closes the connection (connection.close, then close-ok) and records
// it.
func (r *Raw) Close() {
	r.s.tb.Helper()
	r.Send(0, &wire.ConnectionClose{ReplyCode: 200, ReplyText: "bye"})
	r.Recv(1)
	r.nc.Close()
}

// expect reads the next method, which must be like like on channel ch.
func (r *Raw) expect(ch uint16, like wire.Method) wire.Method {
	r.s.tb.Helper()
	got, m, _ := r.next()
	wc, wm := like.ClassMethod()
	if gc, gm := m.ClassMethod(); gc != wc || gm != wm || got != ch {
		r.s.tb.Fatalf("raw: got %s on channel %d, want %s on channel %d", formatMethod(m), got, wire.MethodName(wc, wm), ch)
	}
	return m
}

// next reads the next method, with its content if it carries one.
func (r *Raw) next() (uint16, wire.Method, *rawContent) {
	r.s.tb.Helper()
	r.nc.SetReadDeadline(time.Now().Add(arrivalTimeout))
	defer r.nc.SetReadDeadline(time.Time{})
	f := r.frame(wire.FrameMethod)
	ch := f.Channel
	m, err := wire.ReadMethod(f.Payload)
	if err != nil {
		r.s.tb.Fatalf("raw: a method frame: %v", err)
	}
	if !wire.HasContent(m) {
		return ch, m, nil
	}
	h, err := wire.ReadContentHeader(r.frame(wire.FrameHeader).Payload)
	if err != nil {
		r.s.tb.Fatalf("raw: a content header: %v", err)
	}
	p, err := wire.DecodePropertiesOrdered(h.Props)
	if err != nil {
		r.s.tb.Fatalf("raw: properties: %v", err)
	}
	c := &rawContent{props: p}
	for uint64(len(c.body)) < h.BodySize {
		c.body = append(c.body, r.frame(wire.FrameBody).Payload...)
	}
	return ch, m, c
}

// frame reads the next frame other than a heartbeat, which must be of type
// typ.
func (r *Raw) frame(typ uint8) wire.Frame {
	r.s.tb.Helper()
	for {
		f, err := r.r.ReadFrame()
		if err != nil {
			r.s.tb.Fatalf("raw read: %v", err)
		}
		if f.Type == wire.FrameHeartbeat {
			continue
		}
		if f.Type != typ {
			r.s.tb.Fatalf("raw read: frame type %d on channel %d, want %d", f.Type, f.Channel, typ)
		}
		return f
	}
}

// rawContent is a message as Raw read it.
type rawContent struct {
	props wire.Properties
	body  []byte
}

// String writes the body, the expiration and the headers: their names
// sorted, but a nested table's fields in the order they came in.
func (c *rawContent) String() string {
	s := fmt.Sprintf("body=%q", c.body)
	if c.props.Flags&wire.FlagExpiration != 0 {
		s += fmt.Sprintf(" expiration=%q", c.props.Expiration)
	}
	if c.props.Headers != nil {
		s += " headers=" + formatWireValue(c.props.Headers)
	}
	return s
}

// formatWireValue writes a value decoded by lapse's codec as formatValue
// writes amqp091-go's, except that an OrderedTable keeps its order.
func formatWireValue(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + formatWireValue(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case wire.OrderedTable:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = f.Key + "=" + formatWireValue(f.Value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = formatWireValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case wire.Decimal:
		return fmt.Sprintf("decimal(scale=%d, value=%d)", v.Scale, v.Value)
	default:
		return formatValue(v)
	}
}

// formatMethod writes a method as its name and its fields, those that are
// not zero, in the order of the spec.
func formatMethod(m wire.Method) string {
	cls, mid := m.ClassMethod()
	var b strings.Builder
	b.WriteString(wire.MethodName(cls, mid))
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		if f.IsZero() || strings.HasPrefix(name, "Reserved") {
			continue
		}
		switch x := f.Interface().(type) {
		case map[string]any:
			fmt.Fprintf(&b, " %s=%s", name, formatWireValue(x))
		case string:
			fmt.Fprintf(&b, " %s=%q", name, x)
		default:
			fmt.Fprintf(&b, " %s=%v", name, x)
		}
	}
	return b.String()
}

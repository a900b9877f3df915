package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// allMethods returns a new zero value of every method this codec knows,
// found by trying every class and method id.
func allMethods() []Method {
	var ms []Method
	for class := range uint16(256) {
		for method := range uint16(256) {
			if m := newMethod(class, method); m != nil {
				ms = append(ms, m)
			}
		}
	}
	return ms
}

// sampleArguments is the table that fill puts in every table field.
func sampleArguments() map[string]any {
	return map[string]any{"x-message-ttl": int32(60000), "x-queue-type": "classic", "nested": map[string]any{"a": true}}
}

// fill sets every field of the method struct m: the n-th field gets a value
// derived from n and seed, and bool fields follow the bit pattern boolMask
// (bit i for the i-th bool field), so that a bit read from the wrong
// position or a field read in the wrong order shows.
func fill(m Method, seed int, boolMask uint64) Method {
	v := reflect.ValueOf(m).Elem()
	nbool := 0
	for i := range v.NumField() {
		f := v.Field(i)
		n := uint64(seed*100 + i + 1)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(boolMask&(1<<nbool) != 0)
			nbool++
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(n * 0x0101010101010101 >> (64 - f.Type().Bits()))
		case reflect.String:
			f.SetString(fmt.Sprintf("%s-%d", v.Type().Field(i).Name, n))
		case reflect.Map:
			f.Set(reflect.ValueOf(sampleArguments()))
		default:
			panic("fill: field kind " + f.Kind().String())
		}
	}
	return m
}

// boolFields returns how many bool fields the method struct m has.
func boolFields(m Method) int {
	v := reflect.ValueOf(m).Elem()
	n := 0
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.Bool {
			n++
		}
	}
	return n
}

// mustReadMethodFrame reads one frame from b, checks that it is a method
// frame on channel and returns its decoded method.
func mustReadMethodFrame(tb testing.TB, b []byte, channel uint16) Method {
	tb.Helper()
	r := NewReader(bytes.NewReader(b))
	r.SetMaxFrame(1 << 20)
	f, err := r.ReadFrame()
	if err != nil {
		tb.Fatalf("ReadFrame: %v", err)
	}
	if f.Type != FrameMethod || f.Channel != channel {
		tb.Fatalf("frame type %d channel %d, want %d on %d", f.Type, f.Channel, FrameMethod, channel)
	}
	m, err := ReadMethod(f.Payload)
	if err != nil {
		tb.Fatalf("ReadMethod: %v", err)
	}
	return m
}

func TestMethodRoundTripEveryMethod(t *testing.T) {
	ms := allMethods()
	if len(ms) != 66 {
		t.Errorf("codec knows %d methods, want the 66 of AMQP 0-9-1 with RabbitMQ's extensions", len(ms))
	}
	for _, proto := range ms {
		class, method := proto.ClassMethod()
		name := MethodName(class, method)
		t.Run(name, func(t *testing.T) {
			variants := []uint64{0, ^uint64(0)}
			for i := range boolFields(proto) {
				variants = append(variants, 1<<i)
			}
			for seed, mask := range variants {
				want := fill(newMethod(class, method), seed, mask)
				frame := AppendMethodFrame(nil, 7, want)
				got := mustReadMethodFrame(t, frame, 7)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("bool mask %b: round trip (-want +got):\n%s", mask, diff)
				}
				into := newMethod(class, method)
				fill(into, seed+1, ^mask) // stale values must all be overwritten
				if err := ReadMethodInto(frame[7:len(frame)-1], into); err != nil {
					t.Fatalf("ReadMethodInto: %v", err)
				}
				if diff := cmp.Diff(want, into); diff != "" {
					t.Errorf("bool mask %b: ReadMethodInto (-want +got):\n%s", mask, diff)
				}
			}
		})
	}
}

func TestMethodNamesAndIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range allMethods() {
		class, method := m.ClassMethod()
		name := MethodName(class, method)
		if seen[name] {
			t.Errorf("method name %q used twice", name)
		}
		seen[name] = true
		if got := newMethod(class, method); reflect.TypeOf(got) != reflect.TypeOf(m) {
			t.Errorf("%s: newMethod gives %T, want %T", name, got, m)
		}
		// The Go type is the XML name in CamelCase: queue.declare-ok is QueueDeclareOk.
		want := ""
		up := true
		for _, r := range name {
			switch {
			case r == '.' || r == '-':
				up = true
			case up:
				want += string(r - 'a' + 'A')
				up = false
			default:
				want += string(r)
			}
		}
		if got := reflect.TypeOf(m).Elem().Name(); got != want {
			t.Errorf("%s is type %s, want %s", name, got, want)
		}
	}
	if got := MethodName(60, 99); got != "class 60, method 99" {
		t.Errorf("MethodName(60, 99) = %q", got)
	}
}

func TestMethodIDsOfRabbitMQExtensions(t *testing.T) {
	for _, tc := range []struct {
		m             Method
		class, method uint16
	}{
		{&ExchangeBind{}, 40, 30},
		{&ExchangeBindOk{}, 40, 31},
		{&ExchangeUnbind{}, 40, 40},
		{&ExchangeUnbindOk{}, 40, 51},
		{&BasicNack{}, 60, 120},
		{&ConfirmSelect{}, 85, 10},
		{&ConfirmSelectOk{}, 85, 11},
		{&ConnectionBlocked{}, 10, 60},
		{&ConnectionUnblocked{}, 10, 61},
		{&ConnectionUpdateSecret{}, 10, 70},
		{&ConnectionUpdateSecretOk{}, 10, 71},
		{&QueueUnbind{}, 50, 50},
		{&QueueUnbindOk{}, 50, 51},
		{&AccessRequest{}, 30, 10},
		{&AccessRequestOk{}, 30, 11},
	} {
		class, method := tc.m.ClassMethod()
		if class != tc.class || method != tc.method {
			t.Errorf("%T ids %d/%d, want %d/%d", tc.m, class, method, tc.class, tc.method)
		}
	}
}

func TestHasContent(t *testing.T) {
	for _, m := range allMethods() {
		class, method := m.ClassMethod()
		want := class == ClassBasic && (method == 40 || method == 50 || method == 60 || method == 71)
		if got := HasContent(m); got != want {
			t.Errorf("HasContent(%s) = %v, want %v", MethodName(class, method), got, want)
		}
	}
}

// TestMethodGoldenBytes pins the wire layout of a few methods to octets
// written out from the specification, since a round trip alone cannot see
// a mistake made the same way in both directions.
func TestMethodGoldenBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Method
		want []byte
	}{
		{"ConnectionTune", &ConnectionTune{ChannelMax: 2047, FrameMax: 131072, Heartbeat: 60},
			[]byte{0, 10, 0, 30, 0x07, 0xFF, 0, 2, 0, 0, 0, 60}},
		{"QueueDeclareDurableOnly", &QueueDeclare{Queue: "q", Durable: true},
			[]byte{0, 50, 0, 10, 0, 0, 1, 'q', 0x02, 0, 0, 0, 0}},
		{"QueueDeclareArguments", &QueueDeclare{Queue: "q", NoWait: true, Arguments: map[string]any{"b": int32(1), "a": "x"}},
			[]byte{0, 50, 0, 10, 0, 0, 1, 'q', 0x10, 0, 0, 0, 15, 1, 'a', 'S', 0, 0, 0, 1, 'x', 1, 'b', 'I', 0, 0, 0, 1}},
		{"BasicPublishMandatory", &BasicPublish{Exchange: "ex", RoutingKey: "rk", Mandatory: true},
			[]byte{0, 60, 0, 40, 0, 0, 2, 'e', 'x', 2, 'r', 'k', 0x01}},
		{"BasicNackMultipleRequeue", &BasicNack{DeliveryTag: 0x0102030405060708, Multiple: true, Requeue: true},
			[]byte{0, 60, 0, 120, 1, 2, 3, 4, 5, 6, 7, 8, 0x03}},
		{"BasicDeliver", &BasicDeliver{ConsumerTag: "c", DeliveryTag: 9, Redelivered: true, Exchange: "", RoutingKey: "k"},
			[]byte{0, 60, 0, 60, 1, 'c', 0, 0, 0, 0, 0, 0, 0, 9, 0x01, 0, 1, 'k'}},
		{"ChannelOpenOkLongstr", &ChannelOpenOk{},
			[]byte{0, 20, 0, 11, 0, 0, 0, 0}},
		{"ExchangeUnbindOk", &ExchangeUnbindOk{},
			[]byte{0, 40, 0, 51}},
		{"ConnectionStartOk", &ConnectionStartOk{Mechanism: "PLAIN", Response: "\x00u\x00p", Locale: "en_US"},
			[]byte{0, 10, 0, 11, 0, 0, 0, 0, 5, 'P', 'L', 'A', 'I', 'N', 0, 0, 0, 4, 0, 'u', 0, 'p', 5, 'e', 'n', '_', 'U', 'S'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := AppendMethodFrame(nil, 1, tc.m)
			want := AppendFrame(nil, FrameMethod, 1, tc.want)
			if !bytes.Equal(frame, want) {
				t.Errorf("AppendMethodFrame:\n got %v\nwant %v", frame, want)
			}
			got, err := ReadMethod(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.m, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ReadMethod (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadMethodUnknownIsNotImplemented(t *testing.T) {
	for _, ids := range [][4]byte{{0, 60, 0, 41}, {0, 99, 0, 10}, {0, 40, 0, 41}, {0, 30, 0, 12}} {
		_, err := ReadMethod(ids[:])
		var e *Error
		if !errors.As(err, &e) || e.Code != NotImplemented {
			t.Errorf("ReadMethod(%v) = %v, want *Error 540", ids, err)
		}
	}
}

func TestReadMethodIntoWrongMethod(t *testing.T) {
	payload := AppendMethodFrame(nil, 1, &BasicAck{DeliveryTag: 1})
	err := ReadMethodInto(payload[7:len(payload)-1], &BasicNack{})
	if err == nil || err.Error() != "wire: payload holds basic.ack, not basic.nack" {
		t.Errorf("ReadMethodInto into the wrong method: %v", err)
	}
}

func TestAppendDeliverIsAppendMethodFrame(t *testing.T) {
	for _, redelivered := range []bool{false, true} {
		m := &BasicDeliver{ConsumerTag: "ctag", DeliveryTag: 1 << 40, Redelivered: redelivered, Exchange: "ex", RoutingKey: "rk.1"}
		want := AppendMethodFrame(nil, 7, m)
		got := AppendDeliver(nil, 7, m.ConsumerTag, m.DeliveryTag, m.Redelivered, []byte(m.Exchange), []byte(m.RoutingKey))
		if !bytes.Equal(got, want) {
			t.Fatalf("redelivered %t:\n got %x\nwant %x", redelivered, got, want)
		}
	}
}

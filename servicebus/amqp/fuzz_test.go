package amqp

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpora in testdata/fuzz")

// fuzzOpts compares a decoded value with its re-encoded and re-decoded self.
var fuzzOpts = cmp.Options{cmpopts.EquateNaNs(), cmpopts.EquateEmpty()}

// mustDecodeError fails unless err is a *DecodeError.
func mustDecodeError(t *testing.T, err error) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
}

func FuzzReadValue(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := ReadValue(b)
		if err != nil {
			mustDecodeError(t, err)
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("ReadValue took %d of %d bytes", n, len(b))
		}
		enc, err := AppendValue(nil, v)
		if err != nil {
			t.Fatalf("AppendValue of a decoded %T: %v", v, err)
		}
		v2, n2, err := ReadValue(enc)
		if err != nil {
			t.Fatalf("ReadValue of re-encoded % x: %v", enc, err)
		}
		if n2 != len(enc) {
			t.Fatalf("ReadValue took %d of %d re-encoded bytes", n2, len(enc))
		}
		if diff := cmp.Diff(v, v2, fuzzOpts); diff != "" {
			t.Fatalf("re-encoded value differs (-first +second):\n%s", diff)
		}
		// Whatever the input was, ours is no larger, so it fits wherever
		// the input did; but for an error's description and info, which
		// we always write, null or not (error.go), a byte each.
		if len(enc) > n+2*errorsIn(reflect.ValueOf(v)) {
			t.Fatalf("re-encoding grew %d bytes to %d", n, len(enc))
		}
	})
}

// errorsIn counts the *Error values in v, however deep.
func errorsIn(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		n := 0
		if _, ok := v.Interface().(*Error); ok {
			n = 1
		}
		return n + errorsIn(v.Elem())
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += errorsIn(v.Field(i))
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += errorsIn(v.Index(i))
		}
		return n
	}
	return 0
}

func FuzzReadFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxSize = 1 << 16
		var frames []Frame
		var buf []byte
		r := iotest.HalfReader(bytes.NewReader(b))
		for {
			fr, nb, err := ReadFrame(r, buf, maxSize)
			buf = nb
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF {
					mustDecodeError(t, err)
				}
				break
			}
			fr.Payload = bytes.Clone(fr.Payload)
			frames = append(frames, fr)
		}
		for i, fr := range frames {
			enc, err := AppendFrame(nil, fr.Type, fr.Channel, fr.Body, fr.Payload)
			if err != nil {
				t.Fatalf("frame %d: AppendFrame: %v", i, err)
			}
			again, _, err := ReadFrame(bytes.NewReader(enc), nil, maxSize)
			if err != nil {
				t.Fatalf("frame %d: ReadFrame of re-encoded % x: %v", i, enc, err)
			}
			if diff := cmp.Diff(fr, again, fuzzOpts); diff != "" {
				t.Fatalf("frame %d: re-encoded frame differs (-first +second):\n%s", i, diff)
			}
		}
	})
}

func FuzzUnmarshalMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := UnmarshalMessage(b)
		if err != nil {
			mustDecodeError(t, err)
			return
		}
		enc, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of a decoded message: %v", err)
		}
		m2, err := UnmarshalMessage(enc)
		if err != nil {
			t.Fatalf("UnmarshalMessage of re-encoded % x: %v", enc, err)
		}
		if diff := cmp.Diff(m, m2, fuzzOpts); diff != "" {
			t.Fatalf("re-encoded message differs (-first +second):\n%s", diff)
		}
		if _, err := SplitSections(b); err != nil {
			t.Fatalf("SplitSections refused a message UnmarshalMessage took: %v", err)
		}
	})
}

func FuzzSplitSections(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		secs, err := SplitSections(b)
		if err != nil {
			mustDecodeError(t, err)
			return
		}
		var joined []byte
		for _, s := range secs {
			if s.Code < 0x70 || s.Code > 0x78 {
				t.Fatalf("section code %#x", s.Code)
			}
			if _, n, err := ReadValue(s.Raw); err == nil && n != len(s.Raw) {
				t.Fatalf("section of %d bytes decodes as a value of %d", len(s.Raw), n)
			}
			joined = append(joined, s.Raw...)
		}
		if !bytes.Equal(joined, b) {
			t.Fatalf("sections do not add up to the input")
		}
	})
}

// TestWriteFuzzSeeds rewrites testdata/fuzz when run with -update. The seeds
// are messages encoded by go-amqp (the oracle cases), our encodings of them,
// every performative in frames, and every value of the round-trip table.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	seeds := map[string]map[string][]byte{}
	add := func(fuzzer, name string, b []byte) {
		if seeds[fuzzer] == nil {
			seeds[fuzzer] = map[string][]byte{}
		}
		seeds[fuzzer][name] = b
	}
	var transferPayload []byte
	for _, c := range oracleCases() {
		goEnc, err := c.go_.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		ours, err := c.ours.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for _, fz := range []string{"FuzzUnmarshalMessage", "FuzzSplitSections"} {
			add(fz, "goamqp-"+c.name, goEnc)
			add(fz, "ours-"+c.name, ours)
		}
		add("FuzzReadValue", "goamqp-first-section-"+c.name, goEnc)
		if transferPayload == nil {
			transferPayload = goEnc
		}
	}
	ps := append(fullPerformatives(), minimalPerformatives()...)
	for i, p := range ps {
		set := "full"
		if i >= len(ps)/2 {
			set = "minimal"
		}
		name := set + "-" + compositeName(p.(fieldDecoder))
		body, err := p.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		add("FuzzReadValue", "performative-"+name, body)
		typ := FrameAMQP
		if p.Descriptor() >= 0x40 {
			typ = FrameSASL
		}
		var payload []byte
		if _, ok := p.(*Transfer); ok {
			payload = transferPayload
		}
		frame, err := AppendFrame(nil, typ, 1, p, payload)
		if err != nil {
			t.Fatal(err)
		}
		add("FuzzReadFrame", name, frame)
	}
	for _, c := range valueCases() {
		enc, err := AppendValue(nil, c.v)
		if err != nil {
			t.Fatal(err)
		}
		add("FuzzReadValue", "value-"+c.name, enc)
	}
	for name, conv := range recordedConversations(t) {
		add("FuzzReadFrame", "goamqp-client-"+name, conv)
	}
	for fuzzer, files := range seeds {
		dir := filepath.Join("testdata", "fuzz", fuzzer)
		// keep the frames recorded from real clients (recorded-*, written
		// by servicebus's TestRecordClientFrames), rewrite the rest
		old, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range old {
			if !strings.HasPrefix(filepath.Base(f), "recorded-") {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

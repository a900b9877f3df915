package wire

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the amqp091-* seeds in testdata/fuzz from the amqp091-go session")

// seed is one fuzz seed file.
type seed struct {
	fuzzer, name string
	args         []any
}

// clientSeeds turns the client's frames into fuzz seeds: each method's
// first payload, the tables inside them, the properties of each publish,
// and three frame streams: the handshake, the first publish with its
// content, and the whole session.
func clientSeeds(t *testing.T, s session) []seed {
	var seeds []seed
	seen := map[string]bool{}
	var stream, handshake, publish []byte
	inPublish := false
	headers := 0
	for i, f := range s.frames {
		raw := AppendFrame(nil, f.Type, f.Channel, f.Payload)
		stream = append(stream, raw...)
		if i < 3 {
			handshake = append(handshake, raw...)
		}
		if _, ok := f.method.(*BasicPublish); ok {
			inPublish = publish == nil
		} else if f.Type == FrameMethod {
			inPublish = false
		}
		if inPublish {
			publish = append(publish, raw...)
		}
		switch {
		case f.Type == FrameHeader:
			h, err := ReadContentHeader(f.Payload)
			if err != nil {
				t.Fatal(err)
			}
			headers++
			seeds = append(seeds, seed{"FuzzDecodeProperties", fmt.Sprintf("amqp091-basic.publish-%d", headers), []any{h.Props}})
			if tb := rawTable(t, h.Props, skipToHeaders); tb != nil {
				seeds = append(seeds, seed{"FuzzReadTable", fmt.Sprintf("amqp091-headers-%d", headers), []any{tb}})
			}
		case f.method != nil:
			name := MethodName(f.method.ClassMethod())
			if seen[name] {
				continue
			}
			seen[name] = true
			seeds = append(seeds, seed{"FuzzReadMethod", "amqp091-" + name, []any{f.Payload}})
			if skip, ok := tableSkips[name]; ok {
				seeds = append(seeds, seed{"FuzzReadTable", "amqp091-" + name, []any{rawTable(t, f.Payload[4:], skip)}})
			}
		}
	}
	seeds = append(seeds,
		seed{"FuzzReadFrame", "amqp091-handshake", []any{handshake, uint16(len(handshake) / 2)}},
		seed{"FuzzReadFrame", "amqp091-publish", []any{publish, uint16(13)}},
		seed{"FuzzReadFrame", "amqp091-session", []any{stream, uint16(len(stream) / 3)}},
	)
	return seeds
}

// tableSkips skips, for each client method with a table, the fields
// before it.
var tableSkips = map[string]func(c *cursor){
	"connection.start-ok": func(c *cursor) {},
	"exchange.declare":    func(c *cursor) { c.u16(); c.shortstr(); c.shortstr(); c.u8() },
	"exchange.bind":       func(c *cursor) { c.u16(); c.shortstr(); c.shortstr(); c.shortstr(); c.u8() },
	"queue.declare":       func(c *cursor) { c.u16(); c.shortstr(); c.u8() },
	"queue.bind":          func(c *cursor) { c.u16(); c.shortstr(); c.shortstr(); c.shortstr(); c.u8() },
	"queue.unbind":        func(c *cursor) { c.u16(); c.shortstr(); c.shortstr(); c.shortstr() },
	"basic.consume":       func(c *cursor) { c.u16(); c.shortstr(); c.shortstr(); c.u8() },
}

// skipToHeaders skips the property flags and the properties before the
// headers table; it empties the cursor if there are no headers.
func skipToHeaders(c *cursor) {
	f := c.u16()
	if f&FlagContentType != 0 {
		c.shortstr()
	}
	if f&FlagContentEncoding != 0 {
		c.shortstr()
	}
	if f&FlagHeaders == 0 {
		c.b = nil
	}
}

// rawTable returns the octets of the table that follows what skip skips
// in b, length prefix included, or nil if there is none.
func rawTable(t *testing.T, b []byte, skip func(c *cursor)) []byte {
	c := cursor{b: b}
	skip(&c)
	if c.err != "" {
		t.Fatal(c.err)
	}
	if len(c.b) == 0 {
		return nil
	}
	start := c.b
	c.longbytes("table")
	if c.err != "" {
		t.Fatal(c.err)
	}
	return start[:len(start)-len(c.b)]
}

// seedFile returns a seed in Go's fuzz corpus format.
func seedFile(args []any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch a := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", a)
		case uint16:
			fmt.Fprintf(&b, "uint16(%d)\n", a)
		default:
			panic(fmt.Sprintf("seed argument %T", a))
		}
	}
	return []byte(b.String())
}

// recordSeeds writes the session's seeds with -update (go test
// ./rabbitmq/wire -run TestRecord -update); without, it checks that each is
// there. amqp091-go writes a table's fields in Go's map order, so each
// -update reorders the fields inside the recorded tables.
func recordSeeds(t *testing.T, s session) {
	seeds := clientSeeds(t, s)
	if *update {
		old, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "amqp091-*"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, sd := range seeds {
		path := filepath.Join("testdata", "fuzz", sd.fuzzer, sd.name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, seedFile(sd.args), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("seed %s is missing: run go test -run TestRecordClientSession -update", path)
		}
	}
}

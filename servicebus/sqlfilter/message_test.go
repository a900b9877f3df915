package sqlfilter

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// testMessage is a message with system and user properties in maps.
type testMessage struct {
	sys  map[string]any
	user map[string]any
}

var _ MutableMessage = (*testMessage)(nil)

func (m *testMessage) System(name string) (any, bool) { v, ok := m.sys[name]; return v, ok }
func (m *testMessage) User(name string) (any, bool)   { v, ok := m.user[name]; return v, ok }

// UserFold resolves the name's case as servicebus's msgView does: the
// exact name, else one differing in case only (the first in sorted order
// here).
func (m *testMessage) UserFold(name string) (any, bool) {
	v, ok := m.user[m.foldKey(name)]
	return v, ok
}

func (m *testMessage) SetSystem(name string, v any) error {
	if m.sys == nil {
		m.sys = map[string]any{}
	}
	m.sys[name] = v
	return nil
}

// foldKey is the key of m.user that UserFold finds for name, or name.
func (m *testMessage) foldKey(name string) string {
	if _, ok := m.user[name]; ok {
		return name
	}
	for _, k := range slices.Sorted(maps.Keys(m.user)) {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	return name
}

func (m *testMessage) SetUser(name string, v any) {
	if m.user == nil {
		m.user = map[string]any{}
	}
	m.user[m.foldKey(name)] = v
}

func (m *testMessage) RemoveUser(name string) {
	for k := m.foldKey(name); hasKey(m.user, k); k = m.foldKey(name) {
		delete(m.user, k)
	}
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

var enqueued = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// sample is the message most tests filter.
func sample() *testMessage {
	return &testMessage{
		sys: map[string]any{
			"MessageId":       "m-1",
			"CorrelationId":   "abc",
			"Label":           "Store42",
			"To":              "Store5",
			"ReplyTo":         "johndoe@contoso.com",
			"ContentType":     "application/json",
			"DeliveryCount":   int32(1),
			"SequenceNumber":  int64(42),
			"EnqueuedTimeUtc": enqueued,
			"TimeToLive":      time.Hour,
		},
		user: map[string]any{
			"color":    "blue",
			"quantity": int32(10),
			"priority": "high",
			"price":    2.5,
			"ratio":    float32(0.5),
			"small":    uint8(3),
			"huge":     uint64(1 << 63),
			"flag":     true,
			"StoreId":  "Store1",
			"my prop":  "spaced",
			"Not":      "keyword-named",
			"nothing":  nil,
			"when":     enqueued.Add(time.Hour),
			"span":     90 * time.Minute,
			"id":       [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0},
			"pct":      "50%",
			"multi":    "line1\nline2",
			"opaque":   struct{ X int }{1},
			"negative": int64(-7),
		},
	}
}

// MustCompile compiles a filter or fails the test.
func MustCompile(tb testing.TB, expr string, params map[string]any) *Filter {
	tb.Helper()
	f, err := Compile(expr, params)
	if err != nil {
		tb.Fatalf("Compile(%q): %v", expr, err)
	}
	return f
}

// MustCompileAction compiles an action or fails the test.
func MustCompileAction(tb testing.TB, expr string, params map[string]any) *Action {
	tb.Helper()
	a, err := CompileAction(expr, params)
	if err != nil {
		tb.Fatalf("CompileAction(%q): %v", expr, err)
	}
	return a
}

package rabbitmq

import (
	"crypto/tls"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

func TestPropertiesKey(t *testing.T) {
	args := string(encodeTable(map[string]any{"x": int64(1)}))
	for _, tc := range []struct {
		name, key, argsID, want string
	}{
		{"EmptyKey", "", "", "~"},
		{"Plain", "orders.new", "", "orders.new"},
		{"Escaped", "a.# b/c", "", "a.%23+b%2Fc"},
		{"Tilde", "a~b", "", "a%7Eb"},
		{"WithArgs", "b", args, "b~" + argsHash(args)},
		{"EmptyKeyWithArgs", "", args, "~" + argsHash(args)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := propertiesKey(tc.key, tc.argsID)
			if got != tc.want {
				t.Fatalf("propertiesKey(%q) = %q, want %q", tc.key, got, tc.want)
			}
			parts := tokenise(got)
			if k := unquotePlus(parts[0]); k != tc.key {
				t.Errorf("the key reads back as %q", k)
			}
		})
	}
	if h := argsHash(args); len(h) != 6 {
		t.Errorf("hash %q: want 6 base64url characters, as RabbitMQ's", h)
	}
}

func TestTokenise(t *testing.T) {
	for in, want := range map[string][]string{"": nil, "a": {"a"}, "~": {""}, "a~b": {"a", "b"}, "~h": {"", "h"}, "a~": {"a"},
		"a~b~c": {"a", "b", "c"}} {
		if diff := cmp.Diff(want, tokenise(in)); diff != "" {
			t.Errorf("tokenise(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestDecodeObject(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]any
		err      any
	}{
		{"Empty", "", map[string]any{}, nil},
		{"Null", "null", map[string]any{}, nil},
		{"Undefined", "undefined", map[string]any{}, nil},
		{"Numbers", `{"i": 5, "f": 1.5}`, map[string]any{"i": json.Number("5"), "f": json.Number("1.5")}, nil},
		{"String", `"{}"`, nil, "invalid payload: the request body JSON-decoded to a string. Is the input doubly-JSON-encoded?"},
		{"Garbage", `{} x`, nil, "not_json"},
		{"Array", `[]`, nil, "not_json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeObject([]byte(tc.in))
			var reason any
			if err != nil {
				reason = err.(*apiError).reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || reason != tc.err {
				t.Errorf("err %v (-want +got):\n%s", reason, diff)
			}
		})
	}
}

func TestTablesInJSON(t *testing.T) {
	in := map[string]any{"s": "x", "i": json.Number("60000"), "f": json.Number("1.5"), "e": json.Number("1e3"),
		"b": true, "l": []any{json.Number("1"), "a"}, "t": map[string]any{"k": "v"}}
	table, err := jsonToTable(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": "x", "i": int64(60000), "f": 1.5, "e": 1000.0, "b": true, "l": []any{int64(1), "a"},
		"t": map[string]any{"k": "v"}}
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("jsonToTable (-want +got):\n%s", diff)
	}
	if _, err := jsonToTable(map[string]any{"n": nil}); err == nil || err.(*apiError).reason != "null_not_allowed" {
		t.Errorf("null: %v", err)
	}
	wire := map[string]any{"i8": int8(-1), "u32": uint32(7), "d": wire.Decimal{Scale: 2, Value: 150}, "bin": []byte{0xff},
		"ts": time.Unix(1700000000, 0), "arr": []any{"x", map[string]any{}}, "str": "ok"}
	wantJSON := map[string]any{"i8": int8(-1), "u32": uint32(7), "d": 1.5, "bin": "Not UTF-8, base64 is: /w==",
		"ts": int64(1700000000), "arr": []any{"x", map[string]any{}}, "str": "ok"}
	if diff := cmp.Diff(wantJSON, tableJSON(wire)); diff != "" {
		t.Errorf("tableJSON (-want +got):\n%s", diff)
	}
}

func TestListing(t *testing.T) {
	items := []map[string]any{
		{"name": "b", "vhost": "/", "messages": 2, "arguments": map[string]any{"x": 1}},
		{"name": "a", "vhost": "/", "messages": 10, "arguments": map[string]any{}},
		{"name": "C", "vhost": "v", "messages": 2.5},
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		q    listQuery
		want any
	}{
		{"Default", listQuery{columns: "name"}, []map[string]any{{"name": "a"}, {"name": "b"}, {"name": "C"}}},
		{"SortNumbers", listQuery{sort: "messages", columns: "name"}, []map[string]any{{"name": "b"}, {"name": "C"}, {"name": "a"}}},
		// A missing key sorts as 0, before every other number.
		{"SortMissing", listQuery{sort: "arguments.x", reverse: true, columns: "name"},
			[]map[string]any{{"name": "b"}, {"name": "C"}, {"name": "a"}}},
		{"NestedColumn", listQuery{columns: "arguments.x", sort: "name"},
			[]map[string]any{{}, {"arguments": map[string]any{}}, {"arguments": map[string]any{"x": 1}}}},
		{"Paged", listQuery{paged: true, page: str("1"), pageSize: str("2"), name: str("c"), columns: "name"},
			map[string]any{"total_count": 3, "item_count": 1, "filtered_count": 1, "page": int64(1), "page_size": int64(2),
				"page_count": int64(1), "items": []map[string]any{{"name": "C"}}}},
		{"PageNotAsked", listQuery{paged: true, pageSize: str("2"), columns: "name"},
			[]map[string]any{{"name": "a"}, {"name": "b"}, {"name": "C"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := listing(items, tc.q, []string{"vhost", "name"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestErlangAtom(t *testing.T) {
	for in, want := range map[string]string{"count": "count", "payload_encoding": "payload_encoding", "apply-to": "'apply-to'",
		"Name": "'Name'"} {
		if got := erlangAtom(in); got != want {
			t.Errorf("erlangAtom(%q) = %q, want %q", in, got, want)
		}
	}
}

// A TLS connection's cipher suite as Erlang's ssl reports it in the
// management API's ssl_key_exchange, ssl_cipher and ssl_hash.
func TestTLSSuiteParts(t *testing.T) {
	for _, tc := range []struct {
		version, suite      uint16
		kx, cipher, hashing string
	}{
		{tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256, "any", "aes_128_gcm", "sha256"},
		{tls.VersionTLS13, tls.TLS_CHACHA20_POLY1305_SHA256, "any", "chacha20_poly1305", "sha256"},
		{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "ecdhe_rsa", "aes_256_gcm", "sha384"},
		{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "ecdhe_ecdsa", "aes_128_gcm", "sha256"},
	} {
		kx, cipher, hashing := tlsSuiteParts(tc.version, tc.suite)
		if kx != tc.kx || cipher != tc.cipher || hashing != tc.hashing {
			t.Errorf("%s: %s %s %s, want %s %s %s", tls.CipherSuiteName(tc.suite), kx, cipher, hashing, tc.kx, tc.cipher, tc.hashing)
		}
	}
}

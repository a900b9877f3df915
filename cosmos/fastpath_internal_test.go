package cosmos

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/lapse-emulator/lapse/cosmos/query"
)

// authText unescapes a header as url.QueryUnescape does, and keeps a
// header that is no valid escape, or a resource token, as it is.
func TestAuthTextUnescapesAsQueryUnescape(t *testing.T) {
	for _, h := range []string{
		"type%3Dmaster%26ver%3D1.0%26sig%3DwGeYZIfVyxGt41j7XbbUZGu8DxfAK0PJpwUergA1puI%3D",
		"type=master&ver=1.0&sig=abc+def/ghi=",
		"type%3dmaster%26sig%3d%2B%2f",
		"100%", "%4", "%zz", "a%41", "%41", "+", "",
		"type=resource&ver=1.0&sig=a+b%20;claims;",
		"type%3Dresource%26ver%3D1.0%26sig%3Dx",
		strings.Repeat("%41", 100),
	} {
		want := h
		if !strings.HasPrefix(h, "type=resource") {
			if u, err := url.QueryUnescape(h); err == nil {
				want = u
			}
		}
		if got := string(authText([]byte("kept:"), h)); got != "kept:"+want {
			t.Errorf("authText(%q) = %q, want %q", h, got, "kept:"+want)
		}
	}
}

// A partition key header of one plain string is read as the JSON
// decoder reads it; any other is left to the decoder.
func TestPlainStringKeysReadAsTheDecoderReadsThem(t *testing.T) {
	for _, h := range []string{
		`["pk-000"]`, `[""]`, `["a b ~!"]`, `["a","b"]`, `["a\"b"]`, `["a\\b"]`, `["é"]`,
		`["\u0041"]`, `[1]`, `[null]`, `[{}]`, `["a"`, `"a"]`, `[ "a"]`, `["a"] `,
	} {
		r := &http.Request{Header: http.Header{}}
		r.Header.Set("x-ms-documentdb-partitionkey", h)
		pk, present, err := parseKeyHeader(r)
		if !present {
			t.Fatalf("%s: not present", h)
		}
		v, derr := query.Decode([]byte(h))
		arr, isArr := v.([]any)
		if derr != nil || !isArr {
			if err == nil {
				t.Errorf("%s: read as %#v, which the decoder refuses", h, pk)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual([]any(pk), arr) {
			t.Errorf("%s: read as %#v (%v), the decoder reads %#v", h, pk, err, arr)
		}
		if _, plain := plainStringKey(h); plain && len(arr) != 1 {
			t.Errorf("%s: plain, but the decoder reads %d values", h, len(arr))
		}
	}
}

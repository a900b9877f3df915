package rabbitmq

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file reads request bodies and writes AMQP tables the way RabbitMQ's
// management API does (rabbit_mgmt_util:decode, rabbit_misc:to_amqp_table
// and amqp_table).

// maxBody is RabbitMQ's default management.http.max_body_size.
const maxBody = 10_000_000

// readBody reads a JSON object as rabbit_mgmt_util:decode does: an empty
// body, null, true and false are an empty object; numbers stay
// json.Number, so that integers and floats can be told apart.
func readBody(c *gin.Context) (map[string]any, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, badRequest("Exceeded HTTP request body size limit")
		}
		return nil, badRequest("not_json")
	}
	return decodeObject(raw)
}

// decodeObject decodes a request body (see readBody).
func decodeObject(raw []byte) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "undefined" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, badRequest("not_json")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("not_json")
	}
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case nil, bool:
		return map[string]any{}, nil
	case string:
		return nil, badRequest("invalid payload: the request body JSON-decoded to a string. Is the input doubly-JSON-encoded?")
	}
	return nil, badRequest("not_json")
}

// requireKeys fails like rabbit_mgmt_util:with_decode when keys are absent
// (a null value counts as present): "[{key_missing,count}]".
func requireKeys(body map[string]any, keys ...string) error {
	var missing []string
	for _, k := range keys {
		if _, ok := body[k]; !ok {
			missing = append(missing, "{key_missing,"+erlangAtom(k)+"}")
		}
	}
	if missing == nil {
		return nil
	}
	return badRequest("[" + strings.Join(missing, ",") + "]")
}

// erlangAtom writes an atom as ~p does: quoted unless it is a plain one.
func erlangAtom(s string) string {
	plain := s != "" && s[0] >= 'a' && s[0] <= 'z'
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '@') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// bodyBool reads a boolean field as rabbit_mgmt_util:parse_bool does:
// true, false, "true" or "false"; absent (or null) is false.
func bodyBool(body map[string]any, key string) (bool, error) {
	switch v := body[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		switch v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, badRequest([]any{"not_boolean", body[key]})
}

// bodyString reads a string field; absent (or null) is def.
func bodyString(body map[string]any, key, def string) (string, error) {
	switch v := body[key].(type) {
	case nil:
		return def, nil
	case string:
		return v, nil
	}
	return "", badRequest([]any{"not_string", key})
}

// parseInt reads an integer as rabbit_misc:parse_int does: an integer, a
// float (truncated) or a string of digits.
func parseInt(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) && math.Abs(f) < 1<<63 {
			return int64(f), nil
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, badRequest([]any{"not_integer", v})
}

// jsonNumber returns a JSON number as RabbitMQ's decoder makes it: an
// int64 for an integer, a float64 otherwise.
func jsonNumber(n json.Number) (any, bool) {
	if !strings.ContainsAny(string(n), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		return nil, false // an integer too large for a long
	}
	f, err := n.Float64()
	return f, err == nil
}

// normalizeJSON turns the json.Numbers of a decoded value into int64 or
// float64, for values lapse keeps (policy definitions).
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, ok := jsonNumber(x); ok {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	}
	return v
}

// jsonToTable makes an AMQP field table of a JSON object, as
// rabbit_misc:to_amqp_table does: strings are longstr, integers long
// ('l'), other numbers double ('d'), booleans bool, arrays and objects
// arrays and tables; null is refused (null_not_allowed). Absent or null is
// an empty table.
func jsonToTable(v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		if len(x) == 0 {
			return nil, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			tv, err := jsonToValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = tv
		}
		return out, nil
	}
	return nil, badRequest([]any{"not_a_table", v})
}

func jsonToValue(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, badRequest("null_not_allowed")
	case string, bool:
		return x, nil
	case json.Number:
		if n, ok := jsonNumber(x); ok {
			return n, nil
		}
		return nil, badRequest([]any{"unhandled_type", string(x)})
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), nil
		}
		return x, nil
	case int64:
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			tv, err := jsonToValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = tv
		}
		return out, nil
	case map[string]any:
		t, err := jsonToTable(x)
		if t == nil && err == nil {
			t = map[string]any{}
		}
		return t, err
	}
	return nil, badRequest([]any{"unhandled_type", fmt.Sprint(v)})
}

// tableJSON writes an AMQP field table as RabbitMQ's management API shows
// it (rabbit_misc:amqp_table): an object, {} when empty.
func tableJSON(t map[string]any) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = valueJSON(v)
	}
	return out
}

// valueJSON writes one field value: numbers as numbers, a decimal as a
// float, a timestamp as its seconds, strings and byte arrays as strings
// (bytes that are not UTF-8 as "Not UTF-8, base64 is: ..."), arrays and
// tables as arrays and objects.
func valueJSON(v any) any {
	switch x := v.(type) {
	case string:
		return utf8Safe([]byte(x))
	case []byte:
		return utf8Safe(x)
	case float32:
		return finite(float64(x))
	case float64:
		return finite(x)
	case wire.Decimal:
		return float64(x.Value) / math.Pow10(int(x.Scale))
	case time.Time:
		return x.Unix()
	case map[string]any:
		return tableJSON(x)
	case wire.OrderedTable:
		out := make(map[string]any, len(x))
		for _, f := range x {
			out[f.Key] = valueJSON(f.Value)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = valueJSON(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tableJSON(e)
		}
		return out
	case []wire.OrderedTable:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = valueJSON(e)
		}
		return out
	}
	return v // integers, bool, nil
}

// finite keeps JSON encodable: RabbitMQ cannot hold NaN or infinities
// either, so they show as strings.
func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	return f
}

// utf8Safe is rabbit_misc:utf8_safe.
func utf8Safe(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	enc := base64.StdEncoding.EncodeToString(b)
	var lines []string
	for len(enc) > 76 {
		lines = append(lines, enc[:76])
		enc = enc[76:]
	}
	lines = append(lines, enc)
	return "Not UTF-8, base64 is: " + strings.Join(lines, "\n")
}

// unescapeSegment percent-decodes one path segment ('+' stays '+').
func unescapeSegment(s string) string {
	if v, err := url.PathUnescape(s); err == nil {
		return v
	}
	return s
}

// quotePlus is rabbit_http_util:quote_plus: letters, digits and ".-~_"
// stay, a space becomes '+', every other byte %XX.
func quotePlus(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9',
			ch == '.', ch == '-', ch == '~', ch == '_':
			b.WriteByte(ch)
		case ch == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// unquotePlus is rabbit_http_util:unquote: '+' is a space, %XX a byte, and
// a '%' not followed by two hex digits stays.
func unquotePlus(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+':
			b.WriteByte(' ')
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

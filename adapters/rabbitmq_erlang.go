package adapters

import (
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RabbitMQ builds its error texts with Erlang's io_lib:format, so they embed
// Erlang terms as ~p prints them: {value_negative,-1}, "expected integer,
// got longstr", <<"abc">>. The types below model the few terms those texts
// need, and erlangP prints them the same way (on one line: ~p would break a
// term wider than its line, which none of the short terms here are).

// erlAtom is an Erlang atom, printed bare: routing_key_but_no_dlx_defined.
type erlAtom string

// erlString is an Erlang string, a list of character codes (bytes here):
// printed "quoted" when every byte is printable in Latin-1, else as a list
// of integers, as ~p does with the default +pc latin1.
type erlString string

// erlBinary is an Erlang binary, printed <<"quoted">> or <<1,2,3>>.
type erlBinary string

// erlTuple is an Erlang tuple: {a,b}.
type erlTuple []any

// erlList is an Erlang list: [a,b].
type erlList []any

// erlMap is an Erlang map with binary keys (what a JSON object decodes to):
// #{<<"a">> => 1}, keys in order.
type erlMap map[string]any

// erlangP formats a term as io_lib:format's ~p does. Integers are int64 or
// *big.Int, floats float64.
// erlangPAt prints t as ~p does when it starts at column col of the line:
// a tuple that does not fit in Erlang's 80 columns has its elements after
// the first on lines of their own, indented under the first (io_lib_pretty),
// as in "{value_too_large,\n" + 44 spaces + "99999999999999999999}".
func erlangPAt(t any, col int) string {
	flat := erlangP(t)
	tup, ok := t.(erlTuple)
	if !ok || len(tup) < 2 || col+len(flat) <= 80 {
		return flat
	}
	var b strings.Builder
	b.WriteString("{")
	for i, e := range tup {
		if i > 0 {
			b.WriteString(",\n")
			b.WriteString(strings.Repeat(" ", col+1))
		}
		b.WriteString(erlangP(e))
	}
	b.WriteString("}")
	return b.String()
}

func erlangP(t any) string {
	var b strings.Builder
	writeTerm(&b, t)
	return b.String()
}

func writeTerm(b *strings.Builder, t any) {
	switch v := t.(type) {
	case nil:
		b.WriteString("undefined")
	case erlAtom:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case *big.Int:
		b.WriteString(v.String())
	case float64:
		b.WriteString(erlangFloat(v))
	case erlString:
		if latin1Printable(string(v)) {
			writeQuoted(b, string(v))
			return
		}
		writeBytes(b, "[", string(v), "]")
	case erlBinary:
		if latin1Printable(string(v)) {
			b.WriteString("<<")
			writeQuoted(b, string(v))
			b.WriteString(">>")
			return
		}
		writeBytes(b, "<<", string(v), ">>")
	case erlTuple:
		writeSeq(b, "{", []any(v), "}")
	case erlList:
		writeSeq(b, "[", []any(v), "]")
	case erlMap:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("#{")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeTerm(b, erlBinary(k))
			b.WriteString(" => ")
			writeTerm(b, v[k])
		}
		b.WriteByte('}')
	default:
		b.WriteString("undefined")
	}
}

func writeSeq(b *strings.Builder, open string, items []any, close string) {
	b.WriteString(open)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		writeTerm(b, it)
	}
	b.WriteString(close)
}

func writeBytes(b *strings.Builder, open, s, close string) {
	b.WriteString(open)
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(s[i])))
	}
	b.WriteString(close)
}

// latin1Printable reports whether io_lib would print the bytes as a string:
// printable ASCII, Latin-1 160..255 and the escapable control characters.
// An empty string is printable ("").
func latin1Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 32 && c <= 126, c >= 160:
		case c >= 8 && c <= 13, c == 27:
		default:
			return false
		}
	}
	return true
}

// writeQuoted writes s in double quotes with Erlang's escapes. The bytes go
// out as they are, so UTF-8 text comes back out as UTF-8.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case 27:
			b.WriteString(`\e`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// erlangFloat writes a float as Erlang's ~p does: the shortest digits that
// read back the same, placed either as a plain decimal or with an exponent,
// whichever is shorter (1.5, 100.0, 1.0e3, 0.05, 1.0e-5).
func erlangFloat(f float64) string {
	if f == 0 {
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±xx
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	place := x + 1 // value = 0.digits × 10^place
	n := len(digits)
	if place > 0 && place < n {
		return sign + digits[:place] + "." + digits[place:]
	}
	if place == 0 {
		return sign + "0." + digits
	}
	expText := strconv.Itoa(place - 1)
	expDot := 1
	if n == 1 {
		expDot = 2
	}
	expCost := len(expText) + 1 + expDot
	withExp := digits[:1] + "." + digits[1:]
	if n == 1 {
		withExp += "0"
	}
	withExp += "e" + expText
	if place < 0 {
		if 2-place <= expCost {
			return sign + "0." + strings.Repeat("0", -place) + digits
		}
		return sign + withExp
	}
	if place-n+2 <= expCost {
		return sign + digits + strings.Repeat("0", place-n) + ".0"
	}
	return sign + withExp
}

// rabbitField is a table value as RabbitMQ sees it: its field type name
// and its value as an Erlang term.
type rabbitField struct {
	typ string
	val any
}

// rabbitFieldOf classifies a decoded table value.
func rabbitFieldOf(v any) rabbitField {
	i := func(typ string, n int64) rabbitField { return rabbitField{typ, big.NewInt(n)} }
	switch x := v.(type) {
	case int8:
		return i("byte", int64(x))
	case uint8:
		return i("unsignedbyte", int64(x))
	case int16:
		return i("short", int64(x))
	case uint16:
		return i("unsignedshort", int64(x))
	case int32:
		return i("signedint", int64(x))
	case uint32:
		return i("unsignedint", int64(x))
	case int:
		return i("long", int64(x))
	case int64:
		return i("long", x)
	case uint:
		return i("long", int64(x))
	case uint64:
		return i("long", int64(x))
	case float32:
		return rabbitField{"float", float64(x)}
	case float64:
		return rabbitField{"double", x}
	case string:
		return rabbitField{"longstr", erlBinary(x)}
	case []byte:
		return rabbitField{"longstr", erlBinary(x)}
	case bool:
		return rabbitField{"bool", erlAtom(map[bool]string{true: "true", false: "false"}[x])}
	case nil:
		return rabbitField{"void", erlAtom("undefined")}
	case time.Time:
		return i("timestamp", x.Unix())
	case map[string]any:
		keys := sortedKeys(x)
		table := make(erlList, len(keys))
		for n, k := range keys {
			f := rabbitFieldOf(x[k])
			table[n] = erlTuple{erlBinary(k), erlAtom(f.typ), f.val}
		}
		return rabbitField{"table", table}
	case []any:
		array := make(erlList, len(x))
		for n, e := range x {
			f := rabbitFieldOf(e)
			array[n] = erlTuple{erlAtom(f.typ), f.val}
		}
		return rabbitField{"array", array}
	}
	return rabbitField{"void", erlAtom("undefined")}
}

// isInt reports whether the field has one of the integer types RabbitMQ
// accepts for integer arguments.
func (f rabbitField) isInt() bool {
	switch f.typ {
	case "byte", "short", "signedint", "long", "unsignedbyte", "unsignedshort", "unsignedint":
		return true
	}
	return false
}

// class is rabbit_misc:type_class: integer and float widths compare as one.
func (f rabbitField) class() string {
	switch {
	case f.isInt() || f.typ == "decimal":
		return "int"
	case f.typ == "float" || f.typ == "double":
		return "float"
	}
	return f.typ
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// rabbitVal is rabbit_misc:val of a bare value: '~s' for a binary, '~p'
// otherwise.
func rabbitVal(v any) string {
	if b, ok := v.(erlBinary); ok {
		return "'" + string(b) + "'"
	}
	return "'" + erlangP(v) + "'"
}

// rabbitTypedVal is rabbit_misc:val of a {Type, Value} pair.
func rabbitTypedVal(f rabbitField) string {
	v := erlangP(f.val)
	if b, ok := f.val.(erlBinary); ok {
		v = string(b)
	}
	return "the value '" + v + "' of type '" + f.typ + "'"
}

// termEqual is Erlang's == on the terms a field holds.
func termEqual(a, b any) bool {
	switch x := a.(type) {
	case *big.Int:
		switch y := b.(type) {
		case *big.Int:
			return x.Cmp(y) == 0
		case float64:
			f, _ := new(big.Float).SetInt(x).Float64()
			return f == y
		}
		return false
	case float64:
		if y, ok := b.(*big.Int); ok {
			return termEqual(y, x)
		}
		y, ok := b.(float64)
		return ok && x == y
	case erlList:
		y, ok := b.(erlList)
		return ok && slices.EqualFunc(x, y, termEqual)
	case erlTuple:
		y, ok := b.(erlTuple)
		return ok && slices.EqualFunc(x, y, termEqual)
	}
	return a == b
}

// termExact is Erlang's =:=: the same term, integers and floats apart.
func termExact(a, b any) bool {
	_, ai := a.(*big.Int)
	_, bi := b.(*big.Int)
	_, af := a.(float64)
	_, bf := b.(float64)
	return ai == bi && af == bf && termEqual(a, b)
}

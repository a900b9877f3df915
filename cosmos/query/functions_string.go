package query

import (
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Positions and lengths in the string functions count characters (Unicode
// code points), not bytes.

// stringFunctions are the string functions.
var stringFunctions = map[string]*function{
	"CONCAT": fn(2, -1, func(_ *env, a []any) any {
		var b strings.Builder
		for i := range a {
			s, ok := argStr(a, i)
			if !ok {
				return Undefined
			}
			b.WriteString(s)
		}
		return b.String()
	}),
	"CONTAINS":     strPredicate(strings.Contains),
	"STARTSWITH":   strPredicate(strings.HasPrefix),
	"ENDSWITH":     strPredicate(strings.HasSuffix),
	"STRINGEQUALS": strPredicate(func(a, b string) bool { return a == b }),
	"INDEX_OF": fn(2, 3, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		sub, ok2 := argStr(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		rs := []rune(s)
		start := 0
		if len(a) == 3 {
			n, ok := argNum(a, 2)
			if !ok || n != math.Trunc(n) {
				return Undefined
			}
			if n > float64(len(rs)) {
				return -1.0
			}
			start = int(math.Max(n, 0))
		}
		i := strings.Index(string(rs[start:]), sub)
		if i < 0 {
			return -1.0
		}
		return float64(start + utf8.RuneCountInString(string(rs[start:])[:i]))
	}),
	// LASTINDEXOF(s, sub [, start]): with start, only a match that ends at
	// or before position start counts (the search runs from start back to
	// the beginning).
	"LASTINDEXOF": fn(2, 3, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		sub, ok2 := argStr(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		if len(a) == 3 {
			n, ok := argNum(a, 2)
			if !ok || n != math.Trunc(n) {
				return Undefined
			}
			rs := []rune(s)
			if n < 0 {
				return -1.0
			}
			s = string(rs[:min(int(min(n, float64(len(rs)))+1), len(rs))])
		}
		i := strings.LastIndex(s, sub)
		if i < 0 {
			return -1.0
		}
		return float64(utf8.RuneCountInString(s[:i]))
	}),
	"LEFT": strCount(func(rs []rune, n int) (string, bool) { return string(rs[:min(n, len(rs))]), true }),
	"RIGHT": strCount(func(rs []rune, n int) (string, bool) {
		return string(rs[len(rs)-min(n, len(rs)):]), true
	}),
	"REPLICATE": strCount(func(rs []rune, n int) (string, bool) {
		// The service limits the result to 10,000 characters.
		if len(rs)*n > 10000 {
			return "", false
		}
		return strings.Repeat(string(rs), n), true
	}),
	"LENGTH": fn(1, 1, func(_ *env, a []any) any {
		if s, ok := argStr(a, 0); ok {
			return float64(utf8.RuneCountInString(s))
		}
		return Undefined
	}),
	"LOWER":   strMap(strings.ToLower),
	"UPPER":   strMap(strings.ToUpper),
	"REVERSE": strMap(reverseString),
	"LTRIM":   strTrim(strings.TrimLeft, strings.TrimLeftFunc),
	"RTRIM":   strTrim(strings.TrimRight, strings.TrimRightFunc),
	"TRIM":    strTrim(strings.Trim, strings.TrimFunc),
	"REPLACE": fn(3, 3, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		old, ok2 := argStr(a, 1)
		repl, ok3 := argStr(a, 2)
		if !ok1 || !ok2 || !ok3 {
			return Undefined
		}
		if old == "" {
			return s
		}
		return strings.ReplaceAll(s, old, repl)
	}),
	"SUBSTRING": fn(3, 3, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		start, ok2 := argNum(a, 1)
		n, ok3 := argNum(a, 2)
		if !ok1 || !ok2 || !ok3 {
			return Undefined
		}
		rs := []rune(s)
		from := int(math.Max(0, math.Min(math.Trunc(start), float64(len(rs)))))
		count := int(math.Max(0, math.Min(math.Trunc(n), float64(len(rs)-from))))
		return string(rs[from : from+count])
	}),
	"TOSTRING":        fn(1, 1, func(_ *env, a []any) any { return toString(a[0]) }),
	"STRINGTOARRAY":   parseAs(func(v any) bool { _, ok := v.([]any); return ok }),
	"STRINGTOOBJECT":  parseAs(func(v any) bool { _, ok := v.(*Object); return ok }),
	"STRINGTONUMBER":  parseAs(func(v any) bool { _, ok := v.(float64); return ok }),
	"STRINGTOBOOLEAN": parseAs(func(v any) bool { _, ok := v.(bool); return ok }),
	"STRINGTONULL":    parseAs(func(v any) bool { return v == nil }),
	"STRINGJOIN": fn(2, 2, func(_ *env, a []any) any {
		arr, ok1 := a[0].([]any)
		sep, ok2 := argStr(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		parts := make([]string, len(arr))
		for i, v := range arr {
			s, ok := v.(string)
			if !ok {
				return Undefined
			}
			parts[i] = s
		}
		return strings.Join(parts, sep)
	}),
	// StringSplit(s, sep): an empty separator leaves s whole, and an empty
	// s gives one empty string.
	"STRINGSPLIT": fn(2, 2, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		sep, ok2 := argStr(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		if sep == "" {
			return []any{s}
		}
		parts := strings.Split(s, sep)
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out
	}),
	"CONTAINS_ALL_CI": containsEach(true, andValues, true),
	"CONTAINS_ALL_CS": containsEach(false, andValues, true),
	"CONTAINS_ANY_CI": containsEach(true, orValues, false),
	"CONTAINS_ANY_CS": containsEach(false, orValues, false),
	"REGEXMATCH":      fn(2, 3, regexMatch),
}

// containsEach builds CONTAINS_ALL_* and CONTAINS_ANY_*: CONTAINS(s, x, ci)
// for each further argument x, joined with AND (all) or OR (any) over the
// logical values, so that an undefined x is neither found nor missing.
func containsEach(ci bool, join func(a, b any) any, start bool) *function {
	return fnU(2, -1, func(_ *env, a []any) any {
		s, ok := argStr(a, 0)
		if !ok {
			return Undefined
		}
		if ci {
			s = strings.ToLower(s)
		}
		var acc any = start
		for _, v := range a[1:] {
			x, ok := v.(string)
			if !ok {
				acc = join(acc, Undefined)
				continue
			}
			if ci {
				x = strings.ToLower(x)
			}
			acc = join(acc, strings.Contains(s, x))
		}
		return acc
	})
}

// strPredicate builds f(s, x [, ignoreCase]) for a string test.
func strPredicate(test func(s, x string) bool) *function {
	return fn(2, 3, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		x, ok2 := argStr(a, 1)
		ci, ok3 := optBool(a, 2)
		if !ok1 || !ok2 || !ok3 {
			return Undefined
		}
		if ci {
			s, x = strings.ToLower(s), strings.ToLower(x)
		}
		return test(s, x)
	})
}

// strCount builds f(s, n) for a non-negative integral count n.
func strCount(f func(rs []rune, n int) (string, bool)) *function {
	return fn(2, 2, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		n, ok2 := argNum(a, 1)
		if !ok1 || !ok2 || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return Undefined
		}
		n = math.Min(math.Trunc(n), 1e9)
		r, ok := f([]rune(s), int(n))
		if !ok {
			return Undefined
		}
		return r
	})
}

// strMap builds f(s) for a string-to-string function.
func strMap(f func(string) string) *function {
	return fn(1, 1, func(_ *env, a []any) any {
		if s, ok := argStr(a, 0); ok {
			return f(s)
		}
		return Undefined
	})
}

// strTrim builds a trim function: f(s) trims whitespace, f(s, chars)
// trims any of the characters of chars.
func strTrim(cut func(s, cutset string) string, space func(s string, f func(rune) bool) string) *function {
	return fn(1, 2, func(_ *env, a []any) any {
		s, ok := argStr(a, 0)
		if !ok {
			return Undefined
		}
		if len(a) == 1 {
			return space(s, isTrimSpace)
		}
		set, ok := argStr(a, 1)
		if !ok {
			return Undefined
		}
		return cut(s, set)
	})
}

// isTrimSpace reports whether TRIM removes r by default.
func isTrimSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// reverseString reverses the characters of s.
func reverseString(s string) string {
	rs := []rune(s)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

// parseAs builds a StringToX function: the argument, surrounding whitespace
// removed, must be JSON text of the wanted type.
func parseAs(want func(any) bool) *function {
	return fn(1, 1, func(_ *env, a []any) any {
		s, ok := argStr(a, 0)
		if !ok {
			return Undefined
		}
		v, err := Decode([]byte(s))
		if err != nil || !want(v) {
			return Undefined
		}
		return v
	})
}

// toString is ToString: strings as they are, numbers as JavaScript writes
// them (NaN, Infinity), other values as their JSON text.
func toString(v any) any {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
	}
	return string(AppendJSON(nil, v))
}

// regexMatch is RegexMatch(s, pattern [, modifiers]); the modifiers are
// i (ignore case), m (multi-line), s (dot matches newline) and x (ignore
// whitespace in the pattern).
func regexMatch(e *env, a []any) any {
	s, ok1 := argStr(a, 0)
	pat, ok2 := argStr(a, 1)
	if !ok1 || !ok2 {
		return Undefined
	}
	mods := ""
	if len(a) == 3 {
		m, ok := argStr(a, 2)
		if !ok {
			return Undefined
		}
		mods = m
	}
	re := e.rs.regexp(pat, mods)
	if re == nil {
		return Undefined
	}
	return re.MatchString(s)
}

// regexp compiles, and caches for the run, a RegexMatch pattern; nil when
// the pattern or the modifiers are invalid.
func (rs *runState) regexp(pat, mods string) *regexp.Regexp {
	key := mods + "\x00" + pat
	if re, ok := rs.regexps[key]; ok {
		return re
	}
	flags := ""
	for _, m := range mods {
		switch m {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags, m) {
				flags += string(m)
			}
		case 'x':
			pat = stripPatternSpace(pat)
		default:
			return nil
		}
	}
	if flags != "" {
		pat = "(?" + flags + ")" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		re = nil
	}
	if rs.regexps == nil {
		rs.regexps = map[string]*regexp.Regexp{}
	}
	rs.regexps[key] = re
	return re
}

// stripPatternSpace removes unescaped whitespace outside character classes,
// which is what the x modifier asks for.
func stripPatternSpace(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			b.WriteByte(p[i])
			continue
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case !inClass && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

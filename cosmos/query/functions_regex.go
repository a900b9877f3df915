package query

import (
	"math"
	"regexp"
	"strings"
)

// regexFunctions are the regular-expression functions besides RegexMatch
// (which is with the string functions) and the delimiter functions, the
// newer string functions of the reference.
var regexFunctions = map[string]*function{
	"REGEXEXTRACT":    fn(2, 4, regexExtract(false)),
	"REGEXEXTRACTALL": fn(2, 4, regexExtract(true)),
	"REGEXREPLACE":    fn(3, 4, regexReplace(false)),
	"REGEXREPLACEALL": fn(3, 4, regexReplace(true)),

	// SUBSTRINGAFTER(s, d) and its siblings split s at the first (or last)
	// occurrence of the delimiter d and return the part after (or before)
	// it. A delimiter that does not occur leaves nothing to return: "".
	"SUBSTRINGAFTER":      delimited(strings.Index, true),
	"SUBSTRINGBEFORE":     delimited(strings.Index, false),
	"LASTSUBSTRINGAFTER":  delimited(strings.LastIndex, true),
	"LASTSUBSTRINGBEFORE": delimited(strings.LastIndex, false),
}

// delimited builds a delimiter function: find locates the delimiter, after
// picks the part after it rather than before.
func delimited(find func(s, d string) int, after bool) *function {
	return fn(2, 2, func(_ *env, a []any) any {
		s, ok1 := argStr(a, 0)
		d, ok2 := argStr(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		i := find(s, d)
		switch {
		case i < 0:
			return ""
		case after:
			return s[i+len(d):]
		}
		return s[:i]
	})
}

// regexArgs reads the subject, the pattern at index 1, and the options
// string at index opt (absent: none), and compiles the pattern; ok is false
// when an argument has the wrong type or the pattern or options are
// invalid.
func regexArgs(e *env, a []any, opt int) (s string, re *regexp.Regexp, ok bool) {
	s, ok1 := argStr(a, 0)
	pat, ok2 := argStr(a, 1)
	if !ok1 || !ok2 {
		return "", nil, false
	}
	mods := ""
	if opt < len(a) {
		m, ok := argStr(a, opt)
		if !ok {
			return "", nil, false
		}
		mods = m
	}
	re = e.rs.regexp(pat, mods)
	return s, re, re != nil
}

// regexExtract builds REGEXEXTRACT(s, pattern [, options [, group]]): the
// first match (or, for all, every match) of pattern in s, or the capture
// group of that number (0: the whole match). No match is undefined for
// the first match and [] for all of them.
func regexExtract(all bool) func(e *env, a []any) any {
	return func(e *env, a []any) any {
		s, re, ok := regexArgs(e, a, 2)
		if !ok {
			return Undefined
		}
		group := 0
		if len(a) == 4 {
			n, ok := argNum(a, 3)
			if !ok || n < 0 || n != math.Trunc(n) || int(n) > re.NumSubexp() {
				return Undefined
			}
			group = int(n)
		}
		pick := func(m []int) any {
			if m[2*group] < 0 {
				return Undefined
			}
			return s[m[2*group]:m[2*group+1]]
		}
		if !all {
			m := re.FindStringSubmatchIndex(s)
			if m == nil {
				return Undefined
			}
			return pick(m)
		}
		out := []any{}
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			if v := pick(m); !isUndef(v) {
				out = append(out, v)
			}
		}
		return out
	}
}

// regexReplace builds REGEXREPLACE(s, pattern, replacement [, options]):
// s with the first (or every) match of pattern replaced; $1 or ${name} in
// the replacement stand for a capture group.
func regexReplace(all bool) func(e *env, a []any) any {
	return func(e *env, a []any) any {
		s, re, ok := regexArgs(e, a, 3)
		repl, ok2 := argStr(a, 2)
		if !ok || !ok2 {
			return Undefined
		}
		if all {
			return re.ReplaceAllString(s, repl)
		}
		m := re.FindStringSubmatchIndex(s)
		if m == nil {
			return s
		}
		out := append([]byte(nil), s[:m[0]]...)
		out = re.ExpandString(out, repl, s, m)
		return string(append(out, s[m[1]:]...))
	}
}

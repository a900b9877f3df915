package query

import "unicode/utf8"

// likeKind is the kind of one element of a LIKE pattern.
type likeKind uint8

// The LIKE pattern elements.
const (
	likeLit   likeKind = iota // one given character
	likeOne                   // _ : any one character
	likeAny                   // % : any run of characters
	likeClass                 // [...] or [^...]: one character in (or not in) a set
)

// likeElem is one element of a compiled LIKE pattern.
type likeElem struct {
	kind   likeKind
	r      rune
	ranges []rune // pairs lo, hi for likeClass
	negate bool
}

// likePattern is a compiled LIKE pattern.
type likePattern struct{ elems []likeElem }

// compileLike compiles a LIKE pattern: % matches any run of characters, _
// any one character, [a-f] or [abc] one character of a set, [^...] one
// character outside it; the ESCAPE character makes the next one literal.
// A [ without its ] is a literal [.
func compileLike(p, escape string, hasEscape bool) *likePattern {
	var esc rune = -1
	if hasEscape {
		if r, n := utf8.DecodeRuneInString(escape); n > 0 {
			esc = r
		}
	}
	rs := []rune(p)
	var out []likeElem
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i++
			out = append(out, likeElem{kind: likeLit, r: rs[i]})
		case r == '%':
			if len(out) == 0 || out[len(out)-1].kind != likeAny {
				out = append(out, likeElem{kind: likeAny})
			}
		case r == '_':
			out = append(out, likeElem{kind: likeOne})
		case r == '[':
			el, next, ok := likeClassAt(rs, i+1)
			if !ok {
				out = append(out, likeElem{kind: likeLit, r: r})
				continue
			}
			out = append(out, el)
			i = next
		default:
			out = append(out, likeElem{kind: likeLit, r: r})
		}
	}
	return &likePattern{elems: out}
}

// likeClassAt parses a character set that starts at rs[i], just after its
// [. It returns the element and the index of the closing ].
func likeClassAt(rs []rune, i int) (likeElem, int, bool) {
	el := likeElem{kind: likeClass}
	if i < len(rs) && rs[i] == '^' {
		el.negate = true
		i++
	}
	start := i
	for ; i < len(rs); i++ {
		if rs[i] == ']' && i > start {
			return el, i, true
		}
		lo, hi := rs[i], rs[i]
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			i += 2
		}
		el.ranges = append(el.ranges, lo, hi)
	}
	return likeElem{}, 0, false
}

// matches reports whether element el (not likeAny) matches r.
func (el *likeElem) matches(r rune) bool {
	switch el.kind {
	case likeLit:
		return r == el.r
	case likeOne:
		return true
	case likeClass:
		in := false
		for j := 0; j < len(el.ranges); j += 2 {
			if r >= el.ranges[j] && r <= el.ranges[j+1] {
				in = true
				break
			}
		}
		return in != el.negate
	}
	return false
}

// match reports whether the whole of s matches the pattern. It is the
// classic wildcard matcher: on a mismatch it backtracks to the last % and
// lets it swallow one more character, which is linear for each %.
func (p *likePattern) match(s string) bool {
	rs := []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(rs) {
		if pi < len(p.elems) && p.elems[pi].kind == likeAny {
			star, mark = pi, si
			pi++
			continue
		}
		if pi < len(p.elems) && p.elems[pi].matches(rs[si]) {
			pi++
			si++
			continue
		}
		if star < 0 {
			return false
		}
		mark++
		pi, si = star+1, mark
	}
	for pi < len(p.elems) && p.elems[pi].kind == likeAny {
		pi++
	}
	return pi == len(p.elems)
}

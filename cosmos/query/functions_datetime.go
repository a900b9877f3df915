package query

import (
	"strconv"
	"strings"
	"time"
)

// dateTimeFunctions are the date functions of the newer reference pages:
// AGO, NOW, DAY, MONTH, YEAR, IS_DATETIME and DATETIMEFORMAT.
var dateTimeFunctions = map[string]*function{
	// AGO(part, n) is the query's current time minus n parts.
	"AGO": fn(2, 2, func(e *env, a []any) any {
		n, ok := argNum(a, 1)
		if !ok {
			return Undefined
		}
		return dateTimeAdd(e, []any{a[0], -n, e.rs.now.Format(dateLayout)})
	}),
	// NOW() is the query's current time; NOW(part, n) that time plus n parts.
	"NOW": fn(0, 2, func(e *env, a []any) any {
		now := e.rs.now.Format(dateLayout)
		switch len(a) {
		case 0:
			return now
		case 2:
			return dateTimeAdd(e, []any{a[0], a[1], now})
		}
		return Undefined
	}),
	"DAY":   datePartOf("day"),
	"MONTH": datePartOf("month"),
	"YEAR":  datePartOf("year"),
	"IS_DATETIME": fnU(1, 1, func(_ *env, a []any) any {
		s, ok := a[0].(string)
		return ok && isDateTime(s)
	}),
	"DATETIMEFORMAT": fn(2, 2, func(_ *env, a []any) any {
		t, ok1 := argDate(a, 0)
		f, ok2 := argStr(a, 1)
		if !ok1 || !ok2 {
			return Undefined
		}
		return formatDateTime(t, f)
	}),
}

// datePartOf builds DAY, MONTH or YEAR: DateTimePart with that part.
func datePartOf(part string) *function {
	return fn(1, 1, func(e *env, a []any) any { return dateTimePart(e, []any{part, a[0]}) })
}

// isDateTime reports whether s is a date and time string as IS_DATETIME
// accepts it: YYYY-MM-DD, then either Z or a time hh:mm:ss (after T or a
// space) with an optional fraction of one to seven digits and an optional Z.
func isDateTime(s string) bool {
	digits := func(from, n int) bool {
		if from+n > len(s) {
			return false
		}
		for _, c := range []byte(s[from : from+n]) {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	if !digits(0, 4) || len(s) < 10 || s[4] != '-' || !digits(5, 2) || s[7] != '-' || !digits(8, 2) {
		return false
	}
	p := 10
	if p < len(s) && (s[p] == 'T' || s[p] == ' ') {
		if !digits(p+1, 2) || p+3 >= len(s) || s[p+3] != ':' || !digits(p+4, 2) || p+6 >= len(s) || s[p+6] != ':' || !digits(p+7, 2) {
			return false
		}
		p += 9
		if p < len(s) && s[p] == '.' {
			n := 0
			for p++; p < len(s) && s[p] >= '0' && s[p] <= '9'; p++ {
				n++
			}
			if n < 1 || n > 7 {
				return false
			}
		}
	}
	if p < len(s) && s[p] == 'Z' {
		p++
	}
	if p != len(s) {
		return false
	}
	_, ok := parseDate(s)
	return ok
}

// formatDateTime formats t with a .NET-style custom format string: y, M,
// d, H, h, m, s, f, F and t runs are date and time fields, a backslash
// escapes the next character, text in single or double quotes is copied,
// and every other character is copied as it is.
func formatDateTime(t time.Time, f string) string {
	var b strings.Builder
	rs := []rune(f)
	pad := func(v, n int) {
		s := strconv.Itoa(v)
		for i := len(s); i < n; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
	}
	for i := 0; i < len(rs); {
		c := rs[i]
		n := 1
		for i+n < len(rs) && rs[i+n] == c {
			n++
		}
		switch c {
		case '\\':
			if i+1 < len(rs) {
				b.WriteRune(rs[i+1])
			}
			i += 2
			continue
		case '\'', '"':
			j := i + 1
			for j < len(rs) && rs[j] != c {
				b.WriteRune(rs[j])
				j++
			}
			i = j + 1
			continue
		case 'y':
			y := t.Year()
			if n <= 2 {
				y %= 100
			}
			pad(y, max(n, 1))
		case 'M':
			switch {
			case n >= 4:
				b.WriteString(t.Month().String())
			case n == 3:
				b.WriteString(t.Month().String()[:3])
			default:
				pad(int(t.Month()), n)
			}
		case 'd':
			switch {
			case n >= 4:
				b.WriteString(t.Weekday().String())
			case n == 3:
				b.WriteString(t.Weekday().String()[:3])
			default:
				pad(t.Day(), n)
			}
		case 'H':
			pad(t.Hour(), min(n, 2))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(h, min(n, 2))
		case 'm':
			pad(t.Minute(), min(n, 2))
		case 's':
			pad(t.Second(), min(n, 2))
		case 't':
			ampm := "AM"
			if t.Hour() >= 12 {
				ampm = "PM"
			}
			b.WriteString(ampm[:min(n, 2)])
		case 'f', 'F':
			frac := t.Format(".0000000")[1 : 1+min(n, 7)]
			if c == 'F' {
				frac = strings.TrimRight(frac, "0")
			}
			b.WriteString(frac)
		default:
			b.WriteString(strings.Repeat(string(c), n))
		}
		i += n
	}
	return b.String()
}

package query

import (
	"math"
	"math/big"
	"strings"
	"time"
)

// The date functions work on the service's ISO 8601 strings,
// YYYY-MM-DDThh:mm:ss.fffffffZ (UTC, 100 ns precision), on ticks (100 ns
// units since the Unix epoch) and on timestamps (milliseconds since it).

// dateLayout is the format date functions return.
const dateLayout = "2006-01-02T15:04:05.0000000Z"

// ticksPerSecond is the number of 100 ns ticks in a second.
const ticksPerSecond = 10_000_000

// dateFunctions are the date and time functions.
var dateFunctions = map[string]*function{
	"GETCURRENTDATETIME":        fn(0, 0, func(e *env, _ []any) any { return formatDate(e.rs.now) }),
	"GETCURRENTDATETIMESTATIC":  fn(0, 0, func(e *env, _ []any) any { return formatDate(e.rs.now) }),
	"GETCURRENTTIMESTAMP":       fn(0, 0, func(e *env, _ []any) any { return float64(e.rs.now.UnixMilli()) }),
	"GETCURRENTTIMESTAMPSTATIC": fn(0, 0, func(e *env, _ []any) any { return float64(e.rs.now.UnixMilli()) }),
	"GETCURRENTTICKS":           fn(0, 0, func(e *env, _ []any) any { return float64(toTicks(e.rs.now)) }),
	"GETCURRENTTICKSSTATIC":     fn(0, 0, func(e *env, _ []any) any { return float64(toTicks(e.rs.now)) }),
	"DATETIMEADD":               fn(3, 3, dateTimeAdd),
	"DATETIMEPART":              fn(2, 2, dateTimePart),
	"DATETIMEDIFF":              fn(3, 3, dateTimeDiff),
	"DATETIMEFROMPARTS":         fn(3, 7, dateTimeFromParts),
	"DATETIMEBIN":               fn(2, 4, dateTimeBin),
	"DATETIMETOTICKS": fn(1, 1, func(_ *env, a []any) any {
		if t, ok := argDate(a, 0); ok {
			return float64(toTicks(t))
		}
		return Undefined
	}),
	"DATETIMETOTIMESTAMP": fn(1, 1, func(_ *env, a []any) any {
		if t, ok := argDate(a, 0); ok {
			return float64(floorDiv(toTicks(t), 10_000))
		}
		return Undefined
	}),
	"TICKSTODATETIME": fn(1, 1, func(_ *env, a []any) any {
		n, ok := argNum(a, 0)
		if !ok || math.Abs(n) > 3e18 {
			return Undefined
		}
		return formatDate(fromTicks(int64(n)))
	}),
	"TIMESTAMPTODATETIME": fn(1, 1, func(_ *env, a []any) any {
		n, ok := argNum(a, 0)
		if !ok || math.Abs(n) > 3e14 {
			return Undefined
		}
		return formatDate(fromTicks(int64(n) * 10_000))
	}),
}

// formatDate writes t in the service's format, or Undefined outside years
// 1 to 9999.
func formatDate(t time.Time) any {
	if t.Year() < 1 || t.Year() > 9999 {
		return Undefined
	}
	return t.UTC().Format(dateLayout)
}

// unixTicks is the Unix epoch in Go's absolute time, for tick arithmetic.
var unixEpoch = time.Unix(0, 0).UTC()

// toTicks converts t to 100 ns ticks since the Unix epoch.
func toTicks(t time.Time) int64 {
	secs := t.Unix()
	return secs*ticksPerSecond + int64(t.Nanosecond())/100
}

// fromTicks converts 100 ns ticks since the Unix epoch to a time.
func fromTicks(ticks int64) time.Time {
	secs := floorDiv(ticks, ticksPerSecond)
	rem := ticks - secs*ticksPerSecond
	return time.Unix(secs, rem*100).UTC()
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// argDate returns args[i] parsed as an ISO 8601 date and time.
func argDate(args []any, i int) (time.Time, bool) {
	s, ok := args[i].(string)
	if !ok {
		return time.Time{}, false
	}
	return parseDate(s)
}

// parseDate parses YYYY-MM-DD, optionally followed by Thh:mm (or a space
// for the T), :ss, a fraction of up to seven digits, and Z.
func parseDate(s string) (time.Time, bool) {
	num := func(from, n int) (int, bool) {
		if from+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[from : from+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	var h, mi, sec, frac int
	p := 10
	if p < len(s) && (s[p] == 'T' || s[p] == ' ') {
		var ok4, ok5 bool
		h, ok4 = num(p+1, 2)
		mi, ok5 = num(p+4, 2)
		if !ok4 || !ok5 || s[p+3] != ':' {
			return time.Time{}, false
		}
		p += 6
		if p < len(s) && s[p] == ':' {
			var ok bool
			if sec, ok = num(p+1, 2); !ok {
				return time.Time{}, false
			}
			p += 3
			if p < len(s) && s[p] == '.' {
				p++
				digits := 0
				for p < len(s) && s[p] >= '0' && s[p] <= '9' {
					if digits < 7 {
						frac = frac*10 + int(s[p]-'0')
						digits++
					}
					p++
				}
				if digits == 0 {
					return time.Time{}, false
				}
				for ; digits < 7; digits++ {
					frac *= 10
				}
			}
		}
	}
	if p < len(s) && s[p] == 'Z' {
		p++
	}
	if p != len(s) || y < 1 || mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59 || d < 1 || d > daysIn(y, mo) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, frac*100, time.UTC), true
}

// daysIn returns the number of days of month mo of year y.
func daysIn(y, mo int) int {
	return time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// datePart normalizes a date part name: year, month, day, hour, minute,
// second, millisecond, microsecond or nanosecond; "" when unknown.
func datePart(s string) string {
	switch strings.ToLower(s) {
	case "year", "yyyy", "yy":
		return "year"
	case "month", "mm", "m":
		return "month"
	case "day", "dd", "d":
		return "day"
	case "hour", "hh":
		return "hour"
	case "minute", "mi", "n":
		return "minute"
	case "second", "ss", "s":
		return "second"
	case "millisecond", "ms":
		return "millisecond"
	case "microsecond", "mcs":
		return "microsecond"
	case "nanosecond", "ns":
		return "nanosecond"
	}
	return ""
}

// unitTicks is the length of the fixed-length parts in ticks (nanosecond
// excluded: it is below a tick).
var unitTicks = map[string]int64{
	"day":         24 * 3600 * ticksPerSecond,
	"hour":        3600 * ticksPerSecond,
	"minute":      60 * ticksPerSecond,
	"second":      ticksPerSecond,
	"millisecond": 10_000,
	"microsecond": 10,
}

// addMonths adds n months, keeping the day unless the new month is
// shorter, then using its last day (as .NET's AddMonths does).
func addMonths(t time.Time, n int) time.Time {
	total := int(t.Month()) - 1 + n
	y := t.Year() + floorDivInt(total, 12)
	mo := total - floorDivInt(total, 12)*12 + 1
	d := min(t.Day(), daysIn(y, mo))
	return time.Date(y, time.Month(mo), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// floorDivInt divides ints rounding toward negative infinity.
func floorDivInt(a, b int) int { return int(floorDiv(int64(a), int64(b))) }

// dateTimeAdd is DateTimeAdd(part, n, datetime).
func dateTimeAdd(_ *env, a []any) any {
	ps, ok1 := argStr(a, 0)
	n, ok2 := argNum(a, 1)
	t, ok3 := argDate(a, 2)
	part := datePart(ps)
	if !ok1 || !ok2 || !ok3 || part == "" || math.Abs(n) > 1e12 {
		return Undefined
	}
	k := int64(n)
	switch part {
	case "year":
		return formatDate(addMonths(t, int(k)*12))
	case "month":
		return formatDate(addMonths(t, int(k)))
	case "nanosecond":
		return formatDate(fromTicks(toTicks(t) + k/100))
	}
	return formatDate(fromTicks(toTicks(t) + k*unitTicks[part]))
}

// dateTimePart is DateTimePart(part, datetime).
func dateTimePart(_ *env, a []any) any {
	ps, ok1 := argStr(a, 0)
	t, ok2 := argDate(a, 1)
	if !ok1 || !ok2 {
		return Undefined
	}
	switch datePart(ps) {
	case "year":
		return float64(t.Year())
	case "month":
		return float64(t.Month())
	case "day":
		return float64(t.Day())
	case "hour":
		return float64(t.Hour())
	case "minute":
		return float64(t.Minute())
	case "second":
		return float64(t.Second())
	case "millisecond":
		return float64(t.Nanosecond() / 1_000_000)
	case "microsecond":
		return float64(t.Nanosecond() / 1_000)
	case "nanosecond":
		return float64(t.Nanosecond())
	}
	return Undefined
}

// dateTimeDiff is DateTimeDiff(part, start, end): the number of part
// boundaries crossed going from start to end (negative going back).
func dateTimeDiff(_ *env, a []any) any {
	ps, ok1 := argStr(a, 0)
	t1, ok2 := argDate(a, 1)
	t2, ok3 := argDate(a, 2)
	part := datePart(ps)
	if !ok1 || !ok2 || !ok3 || part == "" {
		return Undefined
	}
	switch part {
	case "year":
		return float64(t2.Year() - t1.Year())
	case "month":
		return float64((t2.Year()*12 + int(t2.Month())) - (t1.Year()*12 + int(t1.Month())))
	case "nanosecond":
		return float64((toTicks(t2) - toTicks(t1)) * 100)
	}
	u := unitTicks[part]
	return float64(floorDiv(toTicks(t2), u) - floorDiv(toTicks(t1), u))
}

// dateTimeFromParts is DateTimeFromParts(year, month, day [, hour [,
// minute [, second [, fraction in ticks]]]]).
func dateTimeFromParts(_ *env, a []any) any {
	var p [7]int
	limits := [7][2]int{{1, 9999}, {1, 12}, {1, 31}, {0, 23}, {0, 59}, {0, 59}, {0, ticksPerSecond - 1}}
	for i := range a {
		n, ok := argInt(a, i)
		if !ok || n < int64(limits[i][0]) || n > int64(limits[i][1]) {
			return Undefined
		}
		p[i] = int(n)
	}
	if p[2] > daysIn(p[0], p[1]) {
		return Undefined
	}
	return formatDate(time.Date(p[0], time.Month(p[1]), p[2], p[3], p[4], p[5], p[6]*100, time.UTC))
}

// dateTimeBin is DateTimeBin(datetime, part [, size [, origin]]): the
// start of the size-part bin, counted from origin (the Unix epoch by
// default), that holds datetime.
func dateTimeBin(_ *env, a []any) any {
	t, ok1 := argDate(a, 0)
	ps, ok2 := argStr(a, 1)
	part := datePart(ps)
	if !ok1 || !ok2 || part == "" || part == "year" || part == "month" {
		return Undefined
	}
	size := int64(1)
	if len(a) > 2 {
		n, ok := argInt(a, 2)
		if !ok || n <= 0 {
			return Undefined
		}
		size = n
	}
	origin := unixEpoch
	if len(a) > 3 {
		o, ok := argDate(a, 3)
		if !ok || o.Year() < 1601 {
			return Undefined
		}
		origin = o
	}
	d := toTicks(t) - toTicks(origin)
	if part == "nanosecond" {
		// Bins below a tick: work in nanoseconds, which can overflow int64.
		ns := new(big.Int).Mul(big.NewInt(d), big.NewInt(100))
		sz := big.NewInt(size)
		q := new(big.Int).Div(ns, sz) // Euclidean: rounds down for a positive size
		binTicks := new(big.Int).Div(new(big.Int).Mul(q, sz), big.NewInt(100))
		return formatDate(fromTicks(toTicks(origin) + binTicks.Int64()))
	}
	width := unitTicks[part]
	if size > math.MaxInt64/width {
		return formatDate(origin)
	}
	width *= size
	return formatDate(fromTicks(toTicks(origin) + floorDiv(d, width)*width))
}

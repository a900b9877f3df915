package core

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TTL is a time-to-live. The zero TTL is "not set"; Forever is set but never
// expires; every other TTL is a non-negative duration (zero is a valid TTL: a
// RabbitMQ message with TTL 0 expires on arrival).
type TTL struct {
	d   time.Duration
	set bool
}

// NoTTL is the unset TTL (the zero value).
var NoTTL TTL

// Forever is a TTL that is set but never runs out (Service Bus
// TimeSpan.MaxValue, Cosmos ttl -1).
var Forever = TTL{d: math.MaxInt64, set: true}

// After returns the TTL d; a negative d is treated as zero and a duration of
// math.MaxInt64 as Forever.
func After(d time.Duration) TTL {
	if d < 0 {
		d = 0
	}
	return TTL{d: d, set: true}
}

// IsSet reports whether the TTL was given.
func (t TTL) IsSet() bool { return t.set }

// IsForever reports whether the TTL is set and never runs out.
func (t TTL) IsForever() bool { return t.set && t.d == math.MaxInt64 }

// Duration returns the TTL's length; math.MaxInt64 for Forever and 0 when unset.
func (t TTL) Duration() time.Duration { return t.d }

// Finite reports whether the TTL is set and runs out some time.
func (t TTL) Finite() bool { return t.set && t.d != math.MaxInt64 }

// Less reports whether t is shorter than u, treating unset as longest.
func (t TTL) Less(u TTL) bool {
	switch {
	case !t.set:
		return false
	case !u.set:
		return true
	}
	return t.d < u.d
}

// DueFrom returns the instant a TTL counted from base runs out, or the zero
// time when it never does (unset, Forever, or past the range of time.Time).
func (t TTL) DueFrom(base time.Time) time.Time {
	if !t.Finite() {
		return time.Time{}
	}
	due := base.Add(t.d)
	if due.Before(base) { // overflow
		return time.Time{}
	}
	return due
}

// String formats the TTL for people: "none", "forever", "1500ms", "10m", "14d".
func (t TTL) String() string {
	switch {
	case !t.set:
		return "none"
	case t.IsForever():
		return "forever"
	}
	return FormatDuration(t.d)
}

// MarshalJSON encodes an unset TTL as null, Forever as -1 and others as
// nanoseconds, so that no precision is lost.
func (t TTL) MarshalJSON() ([]byte, error) {
	switch {
	case !t.set:
		return []byte("null"), nil
	case t.IsForever():
		return []byte("-1"), nil
	}
	return []byte(strconv.FormatInt(int64(t.d), 10)), nil
}

// UnmarshalJSON decodes what MarshalJSON writes.
func (t *TTL) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*t = NoTTL
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("ttl: %w", err)
	}
	if n < 0 {
		*t = Forever
		return nil
	}
	*t = After(time.Duration(n))
	return nil
}

// FormatDuration writes a duration the way people write TTLs, in days,
// hours, minutes, seconds and milliseconds, leaving out the zero ones:
// "14d", "1d2h", "55m55s", "1500ms". Below a millisecond it is Go's format.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d < 0 || d%time.Millisecond != 0 {
		return d.String()
	}
	var b strings.Builder
	rest := d
	if d%time.Second != 0 && d < time.Minute {
		// "1500ms" reads better than "1s500ms".
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if n := rest / u.d; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10))
			b.WriteString(u.name)
			rest -= n * u.d
		}
	}
	return b.String()
}

// ParseDuration reads a Go duration ("15m", "1h30m"), a day count ("14d") or
// an ISO 8601 duration ("P14D", "PT10M", "P1DT2H"). Negative durations are
// an error.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, Errorf(EINVALID, "empty duration")
	}
	var d time.Duration
	var err error
	switch {
	case s[0] == 'P' || s[0] == 'p':
		d, err = parseISO8601(s)
	case strings.HasSuffix(s, "d") && !strings.ContainsAny(s[:len(s)-1], "hmsuµn"):
		var n float64
		n, err = strconv.ParseFloat(s[:len(s)-1], 64)
		if err == nil && (n > float64(math.MaxInt64)/float64(24*time.Hour) || n < 0) {
			err = fmt.Errorf("out of range")
		}
		d = time.Duration(n * float64(24*time.Hour))
	default:
		d, err = time.ParseDuration(s)
	}
	if err != nil {
		return 0, Errorf(EINVALID, "invalid duration %q: use a Go duration like 15m or an ISO 8601 one like P14D", s)
	}
	if d < 0 {
		return 0, Errorf(EINVALID, "invalid duration %q: must not be negative", s)
	}
	return d, nil
}

// parseISO8601 reads PnDTnHnMnS (weeks too; years and months are refused:
// they have no fixed length).
func parseISO8601(s string) (time.Duration, error) {
	rest := strings.ToUpper(s[1:])
	if rest == "" {
		return 0, fmt.Errorf("empty")
	}
	var total float64
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return 0, fmt.Errorf("two T")
			}
			inTime = true
			rest = rest[1:]
			if rest == "" {
				return 0, fmt.Errorf("T with nothing after it")
			}
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == ',') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, fmt.Errorf("bad number")
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(rest[:i], ",", "."), 64)
		if err != nil {
			return 0, err
		}
		var unit time.Duration
		switch c := rest[i]; {
		case !inTime && c == 'W':
			unit = 7 * 24 * time.Hour
		case !inTime && c == 'D':
			unit = 24 * time.Hour
		case inTime && c == 'H':
			unit = time.Hour
		case inTime && c == 'M':
			unit = time.Minute
		case inTime && c == 'S':
			unit = time.Second
		default:
			return 0, fmt.Errorf("unit %q", c)
		}
		total += n * float64(unit)
		rest = rest[i+1:]
	}
	if total >= float64(math.MaxInt64) {
		return math.MaxInt64, nil
	}
	return time.Duration(total), nil
}

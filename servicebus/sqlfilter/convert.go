package sqlfilter

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// convert is the implicit conversion SET performs when the new value's type
// differs from the property's: .NET's Convert.ChangeType with the invariant
// culture, plus text to DateTime, TimeSpan and Guid. The error texts are
// .NET's.
func convert(v value, to kind) (value, error) {
	if v.k == to || v.k == kNull || to == kNull || to == kOther {
		return v, nil
	}
	switch to {
	case kString:
		if v.k == kOther {
			break
		}
		return stringValue(v.text()), nil
	case kInt:
		switch v.k {
		case kBool:
			return intValue(v.n), nil
		case kFloat:
			r := math.RoundToEven(v.f)
			if math.IsNaN(r) || r < math.MinInt64 || r >= math.MaxInt64 {
				return null, runtimeError("Value was either too large or too small for an Int64.")
			}
			return intValue(int64(r)), nil
		case kString:
			n, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64)
			if err != nil {
				return null, formatError(v.s)
			}
			return intValue(n), nil
		}
	case kFloat:
		switch v.k {
		case kBool, kInt:
			return floatValue(float64(v.n)), nil
		case kString:
			f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
			if err != nil {
				return null, formatError(v.s)
			}
			return floatValue(f), nil
		}
	case kBool:
		switch v.k {
		case kInt:
			return boolValue(v.n != 0), nil
		case kFloat:
			return boolValue(v.f != 0), nil
		case kString:
			switch strings.ToLower(strings.TrimSpace(v.s)) {
			case "true":
				return boolValue(true), nil
			case "false":
				return boolValue(false), nil
			}
			return null, runtimeError("String '%s' was not recognized as a valid Boolean.", v.s)
		}
	case kTime:
		if v.k == kString {
			if t, ok := parseTime(v.s); ok {
				return timeValue(t), nil
			}
			return null, runtimeError("String '%s' was not recognized as a valid DateTime.", v.s)
		}
	case kDuration:
		if v.k == kString {
			if d, ok := parseTimeSpan(v.s); ok {
				return durationValue(d), nil
			}
			return null, runtimeError("String '%s' was not recognized as a valid TimeSpan.", v.s)
		}
	case kUUID:
		if v.k == kString {
			if u, ok := parseUUID(v.s); ok {
				return value{k: kUUID, u: u}, nil
			}
			return null, runtimeError("Guid should contain 32 digits with 4 dashes (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).")
		}
	}
	return null, runtimeError("Invalid cast from '%s' to '%s'.", systemName(v.k), systemName(to))
}

func formatError(s string) error {
	return runtimeError("The input string '%s' was not in a correct format.", s)
}

// systemName is the full .NET name of a kind, as InvalidCastException
// prints it.
func systemName(k kind) string {
	switch k {
	case kBool:
		return "System.Boolean"
	case kInt:
		return "System.Int64"
	case kFloat:
		return "System.Double"
	case kString:
		return "System.String"
	case kTime:
		return "System.DateTime"
	case kDuration:
		return "System.TimeSpan"
	case kUUID:
		return "System.Guid"
	}
	return "System.Object"
}

// parseTime reads the common invariant forms of a date and time; a value
// without a zone is UTC.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{
		time.RFC3339Nano,
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999",
		"2006-01-02",
		"01/02/2006 15:04:05",
		"01/02/2006",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

package sqlfilter

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLikeMatch(t *testing.T) {
	tests := []struct {
		name, pattern, escape, s string
		want                     bool
	}{
		{name: "Literal", pattern: "abc", s: "abc", want: true},
		{name: "LiteralLonger", pattern: "abc", s: "abcd", want: false},
		{name: "EmptyPatternEmptyText", pattern: "", s: "", want: true},
		{name: "EmptyPatternText", pattern: "", s: "a", want: false},
		{name: "PercentMatchesEmpty", pattern: "%", s: "", want: true},
		{name: "UnderscoreNeedsOne", pattern: "_", s: "", want: false},
		{name: "PercentInMiddle", pattern: "a%c", s: "abbbc", want: true},
		{name: "PercentBacktracks", pattern: "%ab%ab", s: "xabyabab", want: true},
		{name: "PercentsCollapse", pattern: "a%%%b", s: "ab", want: true},
		{name: "UnderscoreIsOneRune", pattern: "_", s: "é", want: true},
		{name: "UnderscoreThenPercent", pattern: "_%_", s: "ab", want: true},
		{name: "UnderscoreThenPercentTooShort", pattern: "_%_", s: "a", want: false},
		{name: "EscapedPercent", pattern: `100\%`, escape: `\`, s: "100%", want: true},
		{name: "EscapedPercentNotWildcard", pattern: `100\%`, escape: `\`, s: "1000", want: false},
		{name: "TrailingEscapeDropped", pattern: `ab\`, escape: `\`, s: "ab", want: true},
		{name: "OnlyFirstEscapeCharacterCounts", pattern: "a!%", escape: "!#", s: "a%", want: true},
		{name: "EscapeOfOrdinaryCharacter", pattern: "!a", escape: "!", s: "a", want: true},
		{name: "CaseSensitive", pattern: "A%", s: "abc", want: false},
		{name: "NewlineMatched", pattern: "a_b", s: "a\nb", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := compileLike(tc.pattern, tc.escape).match(tc.s); got != tc.want {
				t.Errorf("%q LIKE %q ESCAPE %q = %v, want %v", tc.s, tc.pattern, tc.escape, got, tc.want)
			}
		})
	}
}

func TestCompileLikeForm(t *testing.T) {
	if diff := cmp.Diff(`a%_\%\_\\`, compileLike(`a%%_!%!_\`, "!").String()); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

type color string

type uuidLike [16]byte

func TestFromGoNormalizes(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{name: "Nil", in: nil, want: nil},
		{name: "Int", in: 5, want: int64(5)},
		{name: "Int8", in: int8(-5), want: int64(-5)},
		{name: "Int16", in: int16(5), want: int64(5)},
		{name: "Int32", in: int32(5), want: int64(5)},
		{name: "Uint", in: uint(5), want: int64(5)},
		{name: "Uint16", in: uint16(5), want: int64(5)},
		{name: "Uint32", in: uint32(5), want: int64(5)},
		{name: "Uint64Small", in: uint64(5), want: int64(5)},
		{name: "Uint64Huge", in: uint64(math.MaxUint64), want: float64(math.MaxUint64)},
		{name: "Float32", in: float32(0.25), want: 0.25},
		{name: "NamedString", in: color("red"), want: "red"},
		{name: "NamedUUID", in: uuidLike{1}, want: [16]byte{1}},
		{name: "Duration", in: time.Second, want: time.Second},
		{name: "NilPointer", in: (*int)(nil), want: nil},
		{name: "NilSlice", in: []byte(nil), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fromGo(tc.in).toGo()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "True", in: true, want: "True"},
		{name: "Float", in: 1.5, want: "1.5"},
		{name: "FloatWhole", in: 2.0, want: "2"},
		{name: "FloatLarge", in: 1e20, want: "1E+20"},
		{name: "FloatSmall", in: 1.5e-7, want: "1.5E-07"},
		{name: "NaN", in: math.NaN(), want: "NaN"},
		{name: "TimeSpan", in: 26*time.Hour + 3*time.Minute + 4*time.Second + 5*time.Millisecond, want: "1.02:03:04.0050000"},
		{name: "NegativeTimeSpan", in: -90 * time.Second, want: "-00:01:30"},
		{name: "Time", in: enqueued, want: "05/06/2024 07:08:09"},
		{name: "UUID", in: [16]byte{0xab, 1: 0xcd, 15: 1}, want: "abcd0000-0000-0000-0000-000000000001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromGo(tc.in).text(); got != tc.want {
				t.Errorf("text(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseTimeSpan(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{in: "00:00:30", want: 30 * time.Second, ok: true},
		{in: "1.02:03:04.5", want: 26*time.Hour + 3*time.Minute + 4*time.Second + 500*time.Millisecond, ok: true},
		{in: "-01:00", want: -time.Hour, ok: true},
		{in: "3", want: 72 * time.Hour, ok: true},
		{in: "24:00:00", ok: false},
		{in: "1:2:3:4", ok: false},
		{in: "abc", ok: false},
		{in: "00:00:00.12345678", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseTimeSpan(tc.in)
			if ok != tc.ok || ok && got != tc.want {
				t.Errorf("parseTimeSpan(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseUUIDRoundTrip(t *testing.T) {
	u := newID()
	for _, s := range []string{formatUUID(u), "{" + formatUUID(u) + "}"} {
		got, ok := parseUUID(s)
		if !ok || got != u {
			t.Errorf("parseUUID(%q) = %x, %v; want %x", s, got, ok, u)
		}
	}
	if _, ok := parseUUID("1234"); ok {
		t.Error("parseUUID accepted a short string")
	}
}

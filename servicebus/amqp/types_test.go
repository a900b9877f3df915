package amqp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUUIDString(t *testing.T) {
	u := UUID{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00}
	const s = "123e4567-e89b-12d3-a456-426614174000"
	if got := u.String(); got != s {
		t.Errorf("String() = %q, want %q", got, s)
	}
	for _, in := range []string{s, "123E4567-E89B-12D3-A456-426614174000", "{" + s + "}"} {
		got, err := ParseUUID(in)
		if err != nil {
			t.Fatalf("ParseUUID(%q): %v", in, err)
		}
		if got != u {
			t.Errorf("ParseUUID(%q) = %v, want %v", in, got, u)
		}
	}
	for _, bad := range []string{"", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g", s + "0", "123e4567+e89b-12d3-a456-426614174000"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) succeeded", bad)
		}
	}
}

func TestMapGet(t *testing.T) {
	m := Map{{uint64(1), "one"}, {Symbol("x-opt-a"), int64(1)}, {"b", "s"}}
	tests := []struct {
		key    string
		want   any
		wantOK bool
	}{
		{"x-opt-a", int64(1), true},
		{"b", "s", true},
		{"1", nil, false},
		{"missing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := m.Get(tt.key)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Get(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestMapSetDelete(t *testing.T) {
	tests := []struct {
		name string
		do   func(Map) Map
		want Map
	}{
		{"SetAppends", func(m Map) Map { return m.Set(Symbol("new"), 1) },
			Map{{Symbol("a"), 1}, {"b", 2}, {[]byte{1}, 3}, {Symbol("new"), 1}}},
		{"SetReplacesSameType", func(m Map) Map { return m.Set(Symbol("a"), 9) },
			Map{{Symbol("a"), 9}, {"b", 2}, {[]byte{1}, 3}}},
		{"SetStringReplacesSymbol", func(m Map) Map { return m.Set("a", 9) },
			Map{{"a", 9}, {"b", 2}, {[]byte{1}, 3}}},
		{"SetBinaryKey", func(m Map) Map { return m.Set([]byte{1}, 4) },
			Map{{Symbol("a"), 1}, {"b", 2}, {[]byte{1}, 4}}},
		{"SetUncomparableKeyAppends", func(m Map) Map { return m.Set([]any{}, 5) },
			Map{{Symbol("a"), 1}, {"b", 2}, {[]byte{1}, 3}, {[]any{}, 5}}},
		{"DeleteSymbol", func(m Map) Map { return m.Delete("a") },
			Map{{"b", 2}, {[]byte{1}, 3}}},
		{"DeleteString", func(m Map) Map { return m.Delete("b") },
			Map{{Symbol("a"), 1}, {[]byte{1}, 3}}},
		{"DeleteMissing", func(m Map) Map { return m.Delete("zz") },
			Map{{Symbol("a"), 1}, {"b", 2}, {[]byte{1}, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Map{{Symbol("a"), 1}, {"b", 2}, {[]byte{1}, 3}}
			if diff := cmp.Diff(tt.want, tt.do(m)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var nilMap Map
	if got := nilMap.Set("k", "v"); len(got) != 1 {
		t.Errorf("Set on a nil Map = %v", got)
	}
}

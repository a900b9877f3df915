package murmur3

import "testing"

// Published MurmurHash3 values (seed 0); cosmos/ranges_internal_test.go
// checks inputs of other lengths against the JS SDK's hashing.
func TestKnownValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0},
		{"hello", 0x248bfa47},
		{"The quick brown fox jumps over the lazy dog", 0x2e4ff723},
	} {
		if got := Sum32([]byte(tc.in)); got != tc.want {
			t.Errorf("Sum32(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in     string
		h1, h2 uint64
	}{
		{"", 0, 0},
		{"hello", 0xcbd8a7b341bd9b02, 0x5b1e906a48ae1d19},
		{"The quick brown fox jumps over the lazy dog", 0xe34bbc7bbc071b6c, 0x7a433ca9c49a9347},
	} {
		h1, h2 := Sum128([]byte(tc.in))
		if h1 != tc.h1 || h2 != tc.h2 {
			t.Errorf("Sum128(%q) = %#x %#x, want %#x %#x", tc.in, h1, h2, tc.h1, tc.h2)
		}
	}
}

package cosmos

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Issue 26.2: lapse hashes a partition key to its EPK as the SDKs do. The
// expected values are what the JS SDK 4.9.3's own hashing
// (hashV2PartitionKey, hashMultiHashPartitionKey) gives for the same keys.
func TestIssue26_2_EffectivePartitionKeys(t *testing.T) {
	for _, tc := range []struct {
		pk    partitionKey
		multi bool
		want  string
	}{
		{partitionKey{"p0"}, false, "03A4DE7195849FD7388755761E4E5CC0"},
		{partitionKey{"p1"}, false, "062B23DEC15212F01B9A85F4E93A940C"},
		{partitionKey{""}, false, "32E9366E637A71B4E710384B2F4970A0"},
		{partitionKey{5.0}, false, "19C08621B135968252FB34B4CF66F811"},
		{partitionKey{1.5}, false, "35C5DDEB6C795D16A9963C73C54E97BC"},
		{partitionKey{true}, false, "0E711127C5B5A8E4726AC6DD306A3E59"},
		{partitionKey{false}, false, "2FE1BE91E90A3439635E0E9E37361EF2"},
		{partitionKey{nil}, false, "378867E4430E67857ACE5C908374FE16"},
		{partitionKey{"héllo wörld"}, false, "3ED662DB76453F5B89C3DE61C1B8A954"},
		{partitionKey{"p0", "x"}, true, "03A4DE7195849FD7388755761E4E5CC0" + hashV2(partitionKey{"x"})},
	} {
		def := &pkDef{Kind: "Hash", Version: 2}
		if tc.multi {
			def.Kind = "MultiHash"
		}
		if got := epkOf(def, tc.pk); got != tc.want {
			t.Errorf("EPK of %v: %s, want %s", tc.pk, got, tc.want)
		}
	}
	// The first version's hash, as the JS SDK's hashV1PartitionKey gives it.
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"p0", "05C1CD3FDB575008713100"},
		{"", "05C1CF33970FF80800"},
		{5.0, "05C1D9C1C5517C05C014"},
		{-3.0, "05C1C17F27ADE8053FF8"},
		{true, "05C1D7C5A903D803"},
		{nil, "05C1ED45D7475601"},
		{"héllo wörld", "05C1EF7159DB360869C4AA6D6D702178C4B7736D6500"},
	} {
		if got := epkOf(&pkDef{Kind: "Hash", Version: 1}, partitionKey{tc.v}); got != tc.want {
			t.Errorf("version 1 EPK of %v: %s, want %s", tc.v, got, tc.want)
		}
	}
	// A group's key reads back.
	if got := keyOfGroup(partitionKey{"a", 2.0, nil}.canon()); !cmp.Equal(got, partitionKey{"a", 2.0, nil}) {
		t.Errorf("keyOfGroup: %v", got)
	}
}

// Issue 26.2: a container has one range up to 10,000 RU/s of its own
// throughput, else one per 6,000, within the partition count, and the
// ranges split the EPK space with no gap.
func TestIssue26_2_RangeCountAndBounds(t *testing.T) {
	for _, tc := range []struct {
		offer *offerState
		limit int
		want  int
	}{
		{nil, 25, 1},
		{&offerState{Throughput: 400}, 25, 1},
		{&offerState{Throughput: 10000}, 25, 1},
		{&offerState{Throughput: 10100}, 25, 2},
		{&offerState{Throughput: 12000}, 25, 2},
		{&offerState{Throughput: 25100}, 25, 5},
		{&offerState{Throughput: 30000}, 25, 5},
		{&offerState{Throughput: 1000, AutoscaleMax: 40000}, 25, 7},
		{&offerState{Throughput: 1000000}, 25, 25},
	} {
		if got := rangeCount(tc.offer, tc.limit); got != tc.want {
			t.Errorf("rangeCount(%+v, %d) = %d, want %d", tc.offer, tc.limit, got, tc.want)
		}
	}
	// The emulator's bounds of a 5-range container, as the Python SDK's
	// own tests expect them.
	b := rangeBounds(5)
	want := []string{"", "0CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", "19999999999999999999999999999998",
		"26666666666666666666666666666664", "33333333333333333333333333333330", "FF"}
	if !cmp.Equal(b, want) {
		t.Errorf("rangeBounds(5) = %v", b)
	}
}

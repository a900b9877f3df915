package cosmos

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/cosmos/query"
	"github.com/lapse-emulator/lapse/internal/murmur3"
)

// A container's items are spread over partition key ranges as the
// service spreads them over physical partitions (issue 26.2): each item
// has an effective partition key (EPK), a hash of its partition key
// value, and each range holds the EPKs from its minInclusive up to its
// maxExclusive. lapse keeps a container's items together (one core
// entity); the ranges are how it answers the requests that the SDKs'
// query pipelines, feed ranges and change feed send to one range
// (x-ms-documentdb-partitionkeyrangeid, x-ms-start-epk, x-ms-end-epk).

// A new container's physical partitions, as the service makes them: one
// up to 10,000 RU/s (what one partition serves), else one per 6,000 RU/s,
// rounded up (30,000 RU/s make 5, 12,000 make 2, as the SDKs' own tests
// expect of the emulator).
const (
	onePartitionThroughput = 10000
	rangesPerThroughput    = 6000
)

// rangeCount is how many partition key ranges a new container with
// throughput offer gets from its own throughput (manual, or the autoscale
// maximum), at most limit (the official emulator's /PartitionCount). A
// container on its database's throughput has one.
func rangeCount(offer *offerState, limit int) int {
	if offer == nil {
		return 1
	}
	ru := offer.Throughput
	if offer.AutoscaleMax > ru {
		ru = offer.AutoscaleMax
	}
	if ru <= onePartitionThroughput {
		return 1
	}
	n := (ru + rangesPerThroughput - 1) / rangesPerThroughput
	return max(1, min(n, limit))
}

// epkMax is the upper end of the whole EPK space: every EPK sorts below it.
const epkMax = "FF"

// rangeBounds returns the n+1 bounds of n ranges that split the EPK space
// evenly, as the emulator splits it: "", then multiples of the hashes'
// largest value (their first two bits are zero) divided by n, then "FF"
// (for 5 ranges, "0CCC...CCC", "1999...998", ...; the SDKs' own tests
// expect those).
func rangeBounds(n int) []string {
	out := []string{""}
	largest := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 126), big.NewInt(1))
	step := new(big.Int).Div(largest, big.NewInt(int64(n)))
	for i := 1; i < n; i++ {
		b := new(big.Int).Mul(step, big.NewInt(int64(i)))
		out = append(out, strings.ToUpper(leftPad(b.Text(16), 32)))
	}
	return append(out, epkMax)
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// epkRange is a range of EPKs, from min (inclusive) to max (exclusive).
type epkRange struct{ min, max string }

// holds reports whether EPK epk is in r.
func (r epkRange) holds(epk string) bool { return epk >= r.min && epk < r.max }

// epkOf is the EPK of partition key pk in a container of definition def,
// as the service and the SDKs hash it: version 2 (hashV2), a hierarchical
// key's components' version 2 EPKs one after another (MultiHash), or the
// first version's hash (hashV1) for a definition without a version.
func epkOf(def *pkDef, pk partitionKey) string {
	switch {
	case def == nil:
		return hashV2(pk)
	case strings.EqualFold(def.Kind, "MultiHash"):
		return multiEPK(pk)
	case def.Version == 1 && len(pk) == 1:
		return hashV1(pk[0])
	}
	return hashV2(pk)
}

// multiEPK is a hierarchical key's EPK: its components' version 2 EPKs,
// one after another.
func multiEPK(pk partitionKey) string {
	var b strings.Builder
	for _, v := range pk {
		b.WriteString(hashV2(partitionKey{v}))
	}
	return b.String()
}

// The binary encoding's type markers.
const (
	markUndefined = 0x00
	markNull      = 0x01
	markFalse     = 0x02
	markTrue      = 0x03
	markNumber    = 0x05
	markString    = 0x08
	markEnd       = 0xFF
)

// hashV1 is the EPK of a key value by the first version of the partition
// key definition: MurmurHash3 x86 32 of the value's binary encoding (a
// string cut to 100 characters, ended by a zero), then that hash and the
// value, each in the ordered binary encoding (number, string), in
// upper-case hex.
func hashV1(v any) string {
	var in []byte
	switch v := v.(type) {
	case string:
		in = append(in, markString)
		in = append(in, truncateChars(v, 100)...)
		in = append(in, markUndefined)
	case float64:
		in = append(in, markNumber)
		in = binary.LittleEndian.AppendUint64(in, math.Float64bits(v))
	case bool:
		in = append(in, boolMark(v))
	case nil:
		in = append(in, markNull)
	default:
		in = append(in, markUndefined)
	}
	out := appendOrderedNumber(nil, float64(murmur3.Sum32(in)))
	switch v := v.(type) {
	case string:
		out = appendOrderedString(out, truncateChars(v, 100))
	case float64:
		out = appendOrderedNumber(out, v)
	case bool:
		out = append(out, boolMark(v))
	case nil:
		out = append(out, markNull)
	default:
		out = append(out, markUndefined)
	}
	return strings.ToUpper(hex.EncodeToString(out))
}

func boolMark(b bool) byte {
	if b {
		return markTrue
	}
	return markFalse
}

// truncateChars cuts s to n characters (UTF-16 code units, as the SDKs
// count them).
func truncateChars(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}

// appendOrderedNumber appends the ordered binary encoding of number f:
// its marker, then its bits made to sort as numbers do, seven at a time
// after the first byte, each with a continuation bit.
func appendOrderedNumber(b []byte, f float64) []byte {
	bits := math.Float64bits(f)
	if bits < 1<<63 {
		bits ^= 1 << 63
	} else {
		bits = ^bits + 1
	}
	b = append(b, markNumber, byte(bits>>56))
	bits <<= 8
	var last byte
	first := true
	for {
		if !first && last != 0 {
			b = append(b, last)
		}
		first = false
		last = byte(bits>>56) | 0x01
		bits <<= 7
		if bits == 0 {
			break
		}
	}
	if last&0xFE != 0 {
		b = append(b, last&0xFE)
	}
	return b
}

// appendOrderedString appends the ordered binary encoding of string s:
// its marker, its UTF-8 bytes each one more (0xFF kept), at most 101 of
// them, and a zero after a short one.
func appendOrderedString(b []byte, s string) []byte {
	b = append(b, markString)
	short := len([]rune(s)) <= 100
	n := len(s)
	if !short && n > 101 {
		n = 101
	}
	for i := 0; i < n; i++ {
		c := s[i]
		if c < 0xFF {
			c++
		}
		b = append(b, c)
	}
	if short {
		b = append(b, markUndefined)
	}
	return b
}

func hashV2(pk partitionKey) string {
	var buf []byte
	for _, v := range pk {
		switch v := v.(type) {
		case string:
			buf = append(buf, markString)
			buf = append(buf, v...)
			buf = append(buf, markEnd)
		case float64:
			buf = append(buf, markNumber)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		case bool:
			if v {
				buf = append(buf, markTrue)
			} else {
				buf = append(buf, markFalse)
			}
		case nil:
			buf = append(buf, markNull)
		default: // the "none" key, {}: undefined
			buf = append(buf, markUndefined)
		}
	}
	h1, h2 := murmur3.Sum128(buf)
	// The hash's second half, then its first, most significant byte
	// first, as the SDKs write it (checked against the JS SDK's own
	// hashing in TestIssue26_2_EffectivePartitionKeys).
	var out [16]byte
	binary.BigEndian.PutUint64(out[:8], h2)
	binary.BigEndian.PutUint64(out[8:], h1)
	out[0] &= 0x3F
	return strings.ToUpper(hex.EncodeToString(out[:]))
}

// keyOfGroup reads back the partition key of a group (partitionKey.canon).
func keyOfGroup(group string) partitionKey {
	v, err := query.Decode([]byte(group))
	if err != nil {
		return nil
	}
	arr, _ := v.([]any)
	return partitionKey(arr)
}

// requestRange reads the range a request is addressed to: the partition
// key range of x-ms-documentdb-partitionkeyrangeid, narrowed to
// x-ms-start-epk and x-ms-end-epk when the client reads part of it (a
// feed range). ok is false when the request names no range.
func (ct *container) requestRange(c *gin.Context) (r epkRange, ok bool, err error) {
	id := rqRangeID.of(c)
	if id == "" {
		return epkRange{}, false, nil
	}
	// The .NET and Java SDKs send "collection-rid,range-id".
	if i := strings.LastIndexByte(id, ','); i >= 0 {
		id = id[i+1:]
	}
	bounds := ct.bounds()
	n, convErr := strconv.Atoi(id)
	if convErr != nil || n < 0 || n >= len(bounds)-1 {
		e := errorf(http.StatusGone, "The partition key range %s is gone: the container's ranges are 0 to %d.", id, len(bounds)-2)
		e.substatus = 1002
		return epkRange{}, false, e
	}
	r = epkRange{bounds[n], bounds[n+1]}
	if s := rqStartEPK.of(c); s != "" && s > r.min {
		r.min = s
	}
	if e := rqEndEPK.of(c); e != "" && e < r.max {
		r.max = e
	}
	return r, true, nil
}

// rangeOf is the partition key range of the items of group.
func (ct *container) rangeOf(group string) int {
	n := ct.ranges()
	if n == 1 {
		return 0
	}
	epk := epkOf(ct.meta.PartitionKey, keyOfGroup(group))
	bounds := ct.bounds()
	// the last range whose lower bound is at most epk
	return sort.Search(n, func(i int) bool { return bounds[i+1] > epk })
}

// bounds are the bounds of ct's ranges, in the EPK space of its
// definition: a version 1 definition's EPKs begin with the ordered
// encoding of a 32-bit hash, so its ranges cut that number's span.
func (ct *container) bounds() []string {
	n := ct.ranges()
	def := ct.meta.PartitionKey
	if def == nil || def.Version != 1 || strings.EqualFold(def.Kind, "MultiHash") || n == 1 {
		return rangeBounds(n)
	}
	out := []string{""}
	for i := 1; i < n; i++ {
		h := float64(uint64(i) * (1 << 32) / uint64(n))
		out = append(out, strings.ToUpper(hex.EncodeToString(appendOrderedNumber(nil, h))))
	}
	return append(out, epkMax)
}

// ranges is how many partition key ranges ct has.
func (ct *container) ranges() int { return max(1, ct.meta.Ranges) }

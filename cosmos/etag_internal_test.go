package cosmos

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// An ETag is the prefix's bytes and the counter's low 48 bits in hex, in
// the service's GUID-like form, quoted.
func TestETagsHaveTheServicesForm(t *testing.T) {
	var e etagSource
	e.prefix = [8]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0xa0, 0x0b}
	for _, start := range []uint64{0, 41, 1<<48 - 2, 1<<60 + 6} {
		e.n.Store(start)
		n := start + 1
		p := e.prefix
		want := fmt.Sprintf("\"%08x-%04x-0000-%04x-%012x\"", binary.BigEndian.Uint32(p[:4]), binary.BigEndian.Uint16(p[4:6]),
			binary.BigEndian.Uint16(p[6:8]), n&0xffffffffffff)
		if got := e.next(); got != want {
			t.Errorf("after %d: got %s, want %s", start, got, want)
		}
	}
	if got := e.next(); got != `"deadbeef-0102-0000-a00b-000000000008"` {
		t.Errorf("got %s", got)
	}
}

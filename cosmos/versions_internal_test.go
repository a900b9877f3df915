package cosmos

import (
	"net/http"
	"testing"

	"github.com/lapse-emulator/lapse/core"
)

// The version log keeps at least the latest maxVersions changes of a
// container; a continuation older than what it keeps, or from before the
// log began (an earlier run of lapse), is the service's 400 for changes
// past retention, and one it never gave is an invalid continuation.
func TestVersionLogKeepsTheLatestAndRefusesOlderContinuations(t *testing.T) {
	var v versionLogs
	k := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
	const base = 1_000_000
	all := scope{all: true}
	_, end, err := v.since(k, base, "*", all, 0)
	if err != nil || end != base {
		t.Fatalf("from now on an empty log: %d, %v; want %d", end, err, base)
	}
	n := maxVersions + maxVersions/4 + 1
	for i := range n {
		v.add(k, base, version{op: opCreate, group: `["p"]`, id: itoa(uint64(i)), body: []byte(`{}`)})
	}
	status := func(inm string) int {
		_, _, err := v.since(k, base, inm, all, 1)
		if err == nil {
			return http.StatusOK
		}
		return err.(*apiError).status
	}
	kept := uint64(base + n - maxVersions + 1) // the first position still kept (positions start at base+1)
	for _, c := range []struct {
		inm  string
		want int
	}{
		{itoa(kept - 1), http.StatusOK},                     // nothing after it dropped
		{itoa(kept - 2), http.StatusBadRequest},             // the change after it is gone
		{itoa(base - 5), http.StatusBadRequest},             // before the log began
		{itoa(base + uint64(n)), http.StatusOK},             // the latest
		{itoa(base + uint64(n) + 1), http.StatusBadRequest}, // never given
		{"lapse", http.StatusBadRequest},
	} {
		if got := status(c.inm); got != c.want {
			t.Errorf("continuation %s: %d, want %d", c.inm, got, c.want)
		}
	}
	if _, _, err := v.since(k, base, itoa(kept-2), all, 1); err == nil || err.Error() != errPastRetention().Error() {
		t.Errorf("a continuation past retention: %v, want %v", err, errPastRetention())
	}
	recs, next, err := v.since(k, base, itoa(kept-1), all, 2)
	if err != nil || len(recs) != 2 || recs[0].pos != kept || next != kept+1 {
		t.Errorf("from the oldest kept: %d versions from %d, next %d, %v; want 2 from %d, next %d", len(recs), recs[0].pos, next, err, kept, kept+1)
	}

	// A container made again under the name starts above every position
	// given, even on a frozen clock.
	v.forget(k)
	_, end, _ = v.since(k, base, "*", all, 0)
	if end < base+uint64(n) {
		t.Errorf("a new log starts at %d, at or below the positions of the old one (to %d)", end, base+n)
	}
}

func TestVersionLogKeepsItsDocumentsWithinABytesBound(t *testing.T) {
	// Large documents are dropped by their bytes before their count: 1 MiB
	// each, the log holds no more than maxVersionBytes of them, and at
	// least the latest.
	var v versionLogs
	k := core.EntityKey{Protocol: core.Cosmos, Name: "db/c"}
	body := make([]byte, 1<<20)
	for i := range 3 * maxVersionBytes >> 20 {
		v.add(k, 1000, version{op: opCreate, group: `["p"]`, id: itoa(uint64(i)), body: body})
	}
	l := v.logs[k]
	sum := 0
	for _, r := range l.recs {
		sum += len(r.body)
	}
	if l.bytes != sum || sum > maxVersionBytes || len(l.recs) < maxVersionBytes>>21 {
		t.Errorf("kept %d versions of %d bytes (counted %d), want at most %d bytes and at least %d versions",
			len(l.recs), sum, l.bytes, maxVersionBytes, maxVersionBytes>>21)
	}
	if last := l.recs[len(l.recs)-1]; last.id != itoa(uint64(3*maxVersionBytes>>20-1)) {
		t.Errorf("the latest kept is %s", last.id)
	}
}

package adapters

import (
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// effectiveTTL is what core makes of an item's own TTL under a policy.
func effectiveTTL(p core.Policy, item core.TTL) core.TTL { return p.Effective(item) }

// dueAt is when an item expires under a policy: the effective TTL counted
// from the enqueue time or the last modification, the zero time for never.
func dueAt(p core.Policy, item core.TTL, enqueued, modified time.Time) time.Time {
	base := enqueued
	if p.Base == core.FromModified {
		base = modified
	}
	return effectiveTTL(p, item).DueFrom(base)
}

// t0 is an arbitrary instant the tests count from.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

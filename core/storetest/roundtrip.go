package storetest

import (
	"bytes"
	"math"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// Instants that are easy to get wrong: the Unix epoch (0 ms, not the zero
// time), before it (negative milliseconds, which truncate down), far ahead,
// and a nanosecond after the zero time (which truncates to the zero time).
var (
	epoch         = time.Unix(0, 0)
	before1970    = time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
	farFuture     = time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("UTC-8", -8*3600))
	afterZeroTime = time.Time{}.Add(time.Nanosecond)
)

// binary returns n bytes of every value, NUL and invalid UTF-8 included.
func binary(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// fullEntity returns an entity named k with every field set.
func fullEntity(k core.EntityKey) *core.Entity {
	return &core.Entity{
		EntityKey:       k,
		Kind:            "subscription",
		Parent:          "topic",
		DeadLetterQueue: "topic/Subscriptions/sub/$DeadLetterQueue",
		Durable:         true,
		Policy: core.Policy{
			DefaultTTL:               core.After(14 * 24 * time.Hour),
			MaxTTL:                   core.After(1500*time.Millisecond + 1),
			IgnoreItemTTL:            true,
			Base:                     core.FromModified,
			Retroactive:              true,
			OnExpire:                 core.DeadLetter,
			HeadOnly:                 true,
			IdleTTL:                  core.After(5 * time.Minute),
			IdleUses:                 core.UseSend | core.UseReceive | core.UseForward,
			IdleOnlyWithoutConsumers: true,
			Rules: core.RuleIDs{
				ItemTTL: "SB-1", DefaultTTL: "SB-2", Ceiling: "SB-3", Never: "SB-4", Scheduled: "SB-5",
				Expire: "SB-6", LockLost: "SB-7", Idle: "SB-10", Deferred: "SB-9",
			},
		},
		Settings: []core.Setting{
			{Key: "x-message-ttl", Value: "60000"},
			{Key: "x-dead-letter-exchange", Value: ""},
			{Key: "ünïcødé", Value: "✓ \"quoted\" 'single' \x00 nul"},
		},
		Meta:    binary(300),
		Created: base,
		LastSeq: 42,
	}
}

// fullItem returns an item with every field set.
func fullItem(seq uint64) *core.Item {
	return &core.Item{
		Seq:           seq,
		Key:           "partition\x00id/ü'\"",
		Group:         `["partition ü"]`,
		Body:          binary(100),
		Meta:          binary(257),
		State:         core.Locked,
		EnqueuedAt:    base,
		ModifiedAt:    base.Add(1500*time.Microsecond + 3),
		ScheduledAt:   base.Add(-time.Hour),
		TTL:           core.After(90*time.Second + 123),
		EffectiveTTL:  core.After(time.Minute),
		DueAt:         base.Add(time.Minute),
		Rule:          "SB-2",
		Reason:        "the queue's MaxTTL of 1m cut the message's TTL of 1m30s",
		LockedUntil:   base.Add(30*time.Second + 999_999),
		DeliveryCount: math.MaxUint32,
		Persistent:    true,
	}
}

func testEntityRoundTrip(t *testing.T, open Opener) {
	withPolicy := func(name string, f func(p *core.Policy)) *core.Entity {
		e := fullEntity(key(core.ServiceBus, name))
		f(&e.Policy)
		return e
	}
	withCreated := func(name string, at time.Time) *core.Entity {
		e := fullEntity(key(core.ServiceBus, name))
		e.Created = at
		return e
	}
	cases := []*core.Entity{
		fullEntity(key(core.ServiceBus, "AllFieldsSet")),
		{EntityKey: key(core.ServiceBus, "ZeroValues")},
		{EntityKey: key(core.RabbitMQ, "EmptySlices"), Settings: []core.Setting{}, Meta: []byte{}},
		withPolicy("ForeverTTLs", func(p *core.Policy) { p.DefaultTTL, p.MaxTTL, p.IdleTTL = core.Forever, core.Forever, core.Forever }),
		withPolicy("ZeroTTLs", func(p *core.Policy) { p.DefaultTTL, p.MaxTTL, p.IdleTTL = core.After(0), core.After(0), core.After(0) }),
		withPolicy("NanosecondTTLs", func(p *core.Policy) { p.DefaultTTL, p.MaxTTL, p.IdleTTL = core.After(1), core.After(2), core.After(3) }),
		withPolicy("UnsetTTLs", func(p *core.Policy) { p.DefaultTTL, p.MaxTTL, p.IdleTTL = core.NoTTL, core.NoTTL, core.NoTTL }),
		withPolicy("LongestTTLs", func(p *core.Policy) { p.DefaultTTL = core.After(math.MaxInt64 - 1) }),
		withPolicy("LengthLimits", func(p *core.Policy) {
			p.MaxItems, p.MaxBytes, p.Overflow, p.Rules.Limit = core.CapAt(0), core.CapAt(math.MaxInt64), core.RejectNewDeadLetter, "RB-9"
		}),
		withCreated("CreatedAtEpoch", epoch),
		withCreated("CreatedBefore1970", before1970),
		withCreated("CreatedFarAhead", farFuture),
		withCreated("CreatedANanosecondAfterTheZeroTime", afterZeroTime),
		withCreated("CreatedInUTC", base.UTC()),
		withCreated("CreatedOnAWholeMillisecond", base.Truncate(time.Millisecond)),
		func() *core.Entity {
			e := fullEntity(key(core.Cosmos, "LargestLastSeq"))
			e.LastSeq = math.MaxInt64
			return e
		}(),
		func() *core.Entity {
			e := fullEntity(key(core.RabbitMQ, "NotDurable"))
			e.Durable = false
			return e
		}(),
	}
	h := newHarness(t, open)
	for _, e := range cases {
		h.mustAppend(putEntity(e))
	}
	check := func(snap Snapshot) {
		t.Helper()
		for _, e := range cases {
			got, ok := snap.Entity(e.EntityKey)
			if !ok {
				t.Errorf("%s: entity not loaded", e.Name)
				continue
			}
			// No item was ever put: LastSeq too comes back as put.
			if diff := gocmp.Diff(Stored(*e), got, CmpOptions()); diff != "" {
				t.Errorf("%s: loaded entity differs (-want +got):\n%s", e.Name, diff)
			}
		}
	}
	check(h.check())
	h.s = h.reopen()
	check(h.check())
}

func testItemRoundTrip(t *testing.T, open Opener) {
	type tc struct {
		name string
		item *core.Item
	}
	var cases []tc
	add := func(name string, f func(it *core.Item)) {
		it := fullItem(uint64(len(cases) + 1))
		f(it)
		cases = append(cases, tc{name, it})
	}
	add("AllFieldsSet", func(*core.Item) {})
	add("ZeroValues", func(it *core.Item) { *it = core.Item{Seq: it.Seq} })
	add("Active", func(it *core.Item) { it.State = core.Active })
	add("Scheduled", func(it *core.Item) { it.State = core.Scheduled })
	add("Deferred", func(it *core.Item) { it.State = core.Deferred })
	add("UnsetTTLs", func(it *core.Item) { it.TTL, it.EffectiveTTL = core.NoTTL, core.NoTTL })
	add("ForeverTTLs", func(it *core.Item) { it.TTL, it.EffectiveTTL = core.Forever, core.Forever })
	add("ZeroTTLs", func(it *core.Item) { it.TTL, it.EffectiveTTL = core.After(0), core.After(0) })
	add("NanosecondTTLs", func(it *core.Item) { it.TTL, it.EffectiveTTL = core.After(1), core.After(999_999) })
	add("LongestTTL", func(it *core.Item) { it.TTL = core.After(math.MaxInt64 - 1) })
	add("UnsetAndForeverTTL", func(it *core.Item) { it.TTL, it.EffectiveTTL = core.NoTTL, core.Forever })
	add("ZeroTimes", func(it *core.Item) {
		it.EnqueuedAt, it.ModifiedAt, it.ScheduledAt, it.DueAt, it.LockedUntil = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	})
	add("TimesAtEpoch", func(it *core.Item) {
		it.EnqueuedAt, it.ModifiedAt, it.ScheduledAt, it.DueAt, it.LockedUntil = epoch, epoch, epoch, epoch, epoch
	})
	add("TimesBefore1970", func(it *core.Item) {
		it.EnqueuedAt, it.ModifiedAt, it.ScheduledAt, it.DueAt, it.LockedUntil = before1970, before1970, before1970, before1970, before1970
	})
	add("TimesFarAhead", func(it *core.Item) {
		it.EnqueuedAt, it.ModifiedAt, it.ScheduledAt, it.DueAt, it.LockedUntil = farFuture, farFuture, farFuture, farFuture, farFuture
	})
	add("TimesANanosecondAfterTheZeroTime", func(it *core.Item) {
		it.EnqueuedAt, it.DueAt = afterZeroTime, afterZeroTime
	})
	add("EmptyBodyAndMeta", func(it *core.Item) { it.Body, it.Meta = []byte{}, []byte{} })
	add("NilBodyAndMeta", func(it *core.Item) { it.Body, it.Meta = nil, nil })
	add("MegabyteBody", func(it *core.Item) { it.Body = bytes.Repeat([]byte("0123456789abcdef"), 1<<16) })
	add("EmptyKey", func(it *core.Item) { it.Key = "" })
	add("NotPersistent", func(it *core.Item) { it.Persistent = false })

	h := newHarness(t, open)
	k := key(core.Cosmos, "db/items")
	h.mustAppend(putEntity(newEntity(k)))
	for _, c := range cases {
		h.mustAppend(putItem(k, c.item))
	}
	check := func(snap Snapshot) {
		t.Helper()
		got := map[uint64]core.Item{}
		for _, it := range snap.Items[k] {
			got[it.Seq] = it
		}
		for _, c := range cases {
			g, ok := got[c.item.Seq]
			if !ok {
				t.Errorf("%s: item not loaded", c.name)
				continue
			}
			if diff := gocmp.Diff(StoredItem(*c.item), g, CmpOptions()); diff != "" {
				t.Errorf("%s: loaded item differs (-want +got):\n%s", c.name, diff)
			}
		}
	}
	check(h.check())
	h.s = h.reopen()
	check(h.check())
}

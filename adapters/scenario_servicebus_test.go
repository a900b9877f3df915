package adapters_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// sbPolicy is the adapter's core policy of a Service Bus entity of kind on
// tier, the service's defaults changed by set.
func sbPolicy(tb testing.TB, kind adapters.ServiceBusKind, tier adapters.ServiceBusTier, set func(*adapters.ServiceBusEntity)) core.Policy {
	tb.Helper()
	e := adapters.NewServiceBusEntity(kind, tier)
	e.Namespace = "ns"
	if set != nil {
		set(&e)
	}
	p, err := e.Policy()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// MustServiceBus creates a Service Bus queue, topic or subscription (name
// "topic/Subscriptions/sub") with its dead-letter queue, and registers the
// front-end's dead-letter hook.
func (s *scenario) MustServiceBus(name string, kind adapters.ServiceBusKind, tier adapters.ServiceBusTier, set func(*adapters.ServiceBusEntity)) core.EntityKey {
	s.tb.Helper()
	s.register(core.ServiceBus, s.serviceBusDeadLetter)
	p := sbPolicy(s.tb, kind, tier, set)
	dlq := name + "/$DeadLetterQueue"
	// Messages in a dead-letter queue never expire.
	s.MustCreate(core.ServiceBus, dlq, "queue", core.Policy{DefaultTTL: core.Forever}, func(en *core.Entity) { en.Parent = name })
	return s.MustCreate(core.ServiceBus, name, kind.String(), p, func(en *core.Entity) { en.DeadLetterQueue = dlq })
}

// serviceBusDeadLetter is the Service Bus front-end's DeadLetterFunc (SB-8):
// the message moves to the entity's dead-letter queue with its
// DeadLetterReason, here kept in Meta with the rule that sent it there.
func (s *scenario) serviceBusDeadLetter(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
	reason := why.Code
	if why.Code == "expired" {
		reason = "TTLExpiredException"
	}
	it.Meta = []byte(reason + " " + why.Rule)
	if _, err := tx.Enqueue(core.EntityKey{Protocol: core.ServiceBus, Name: from.DeadLetterQueue}, it); err != nil {
		s.tb.Errorf("dead-lettering %q: %v", it.Body, err)
	}
}

// deadLetters peeks at the dead-letter queue of k: "body reason rule".
func (s *scenario) deadLetters(k core.EntityKey) []string {
	s.tb.Helper()
	its, err := s.e.Peek(s.now(), core.EntityKey{Protocol: k.Protocol, Name: k.Name + "/$DeadLetterQueue"}, 0, 100)
	if err != nil {
		s.tb.Fatal(err)
	}
	var out []string
	for _, it := range its {
		out = append(out, string(it.Body)+" "+string(it.Meta))
	}
	return out
}

// sendToTopic sends a message to a topic as the front-end does: a use of the
// topic, and a copy in each subscription with the TTL of SB-5.
func (s *scenario) sendToTopic(topic core.EntityKey, subs []core.EntityKey, body string, ttl core.TTL) []core.Item {
	s.tb.Helper()
	if err := s.e.Touch(s.now(), topic, core.UseSend); err != nil {
		s.tb.Fatal(err)
	}
	en, _ := s.e.Entity(topic)
	var out []core.Item
	for _, sub := range subs {
		out = append(out, s.MustEnqueue(sub, core.Item{Body: []byte(body), TTL: adapters.ServiceBusCopyTTL(en.Policy, ttl)}))
	}
	return out
}

const (
	sbQueue = adapters.ServiceBusQueue
	sbStd   = adapters.ServiceBusStandard
)

func sbTTL(d time.Duration) func(*adapters.ServiceBusEntity) {
	return func(e *adapters.ServiceBusEntity) { e.DefaultMessageTimeToLive = d }
}

func sbDeadLettering(d time.Duration) func(*adapters.ServiceBusEntity) {
	return func(e *adapters.ServiceBusEntity) {
		e.DefaultMessageTimeToLive = d
		e.DeadLetteringOnMessageExpiration = true
	}
}

func TestServiceBusExpiresAtEnqueuedPlusTTL_SB1(t *testing.T) {
	s := MustScenario(t)
	q := s.MustServiceBus("q", sbQueue, sbStd, nil)
	s.advance(3 * time.Minute)
	m := s.MustEnqueue(q, core.Item{Body: []byte("m"), TTL: core.After(10 * time.Minute)})
	check(t, "enqueued, expiry", []string{"3m", "13m SB-1"}, []string{since(m.EnqueuedAt), expiry(m)})
	s.advance(10*time.Minute - time.Millisecond)
	check(t, "counts a millisecond before expiry", core.Counts{Active: 1}, s.counts(q))
	s.advance(time.Millisecond)
	check(t, "counts at expiry", core.Counts{}, s.counts(q))
	s.wantEvents(q, "expired SB-8 1 due 13m at 13m")
}

func TestServiceBusMessageTTLCutToEntityDefault_SB2(t *testing.T) {
	tests := []struct {
		name string
		msg  core.TTL
		want string
	}{
		{"NoMessageTTLTakesEntityDefault_SB2", core.NoTTL, "10m SB-2"},
		{"ShorterMessageTTLKept_SB1", core.After(time.Minute), "1m SB-1"},
		{"LongerMessageTTLCutToEntityDefault_SB2", core.After(time.Hour), "10m SB-2"},
		{"MaxValueMessageTTLCutToEntityDefault_SB2", core.Forever, "10m SB-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(10*time.Minute))
			m := s.MustEnqueue(q, core.Item{Body: []byte("m"), TTL: tt.msg})
			check(t, "expiry", tt.want, expiry(m))
			s.advance(m.DueAt.Sub(s.now()))
			check(t, "left at the due time", []string(nil), s.drain(q))
			s.wantEvents(q, "expired SB-8 1 due "+since(m.DueAt)+" at "+since(m.DueAt))
		})
	}
}

func TestServiceBusDefaultTTLs_SB3(t *testing.T) {
	basic := adapters.ServiceBusBasic
	tests := []struct {
		name string
		tier adapters.ServiceBusTier
		set  func(*adapters.ServiceBusEntity)
		msg  core.TTL
		want string
	}{
		{"StandardNothingSetNeverExpires_SB3", sbStd, nil, core.NoTTL, "never SB-3"},
		{"PremiumNothingSetNeverExpires_SB3", adapters.ServiceBusPremium, nil, core.NoTTL, "never SB-3"},
		{"MaxValueMessageTTLNeverExpires_SB3", sbStd, nil, core.Forever, "never SB-3"},
		{"BasicTierDefaultsTo14Days_SB3", basic, nil, core.NoTTL, "14d SB-2"},
		{"BasicTierCapsMessageTTLAt14Days_SB3", basic, nil, core.After(30 * day), "14d SB-2"},
		{"BasicTierCapsEntityTTLAt14Days_SB3", basic, sbTTL(30 * day), core.NoTTL, "14d SB-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustServiceBus("q", sbQueue, tt.tier, tt.set)
			m := s.MustEnqueue(q, core.Item{Body: []byte("m"), TTL: tt.msg})
			check(t, "expiry", tt.want, expiry(m))
			s.advance(14*day - time.Second)
			check(t, "counts a second before 14 days", core.Counts{Active: 1}, s.counts(q))
			s.advance(time.Second)
			if m.DueAt.IsZero() {
				s.advance(10 * 365 * day)
				check(t, "left after 10 years", []string{"m"}, s.drain(q))
				s.wantEvents(q)
				return
			}
			check(t, "counts at 14 days", core.Counts{}, s.counts(q))
			s.wantEvents(q, "expired SB-8 1 due 14d at 14d")
		})
	}
}

func TestServiceBusScheduledMessage_SB4(t *testing.T) {
	t.Run("Plus5MinutesTTL10MinutesExpires15MinutesFromNow_SB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(time.Hour))
		m := s.MustEnqueue(q, core.Item{Body: []byte("m"), TTL: core.After(10 * time.Minute), State: core.Scheduled, ScheduledAt: s.now().Add(5 * time.Minute)})
		check(t, "expiry", "15m SB-4", expiry(m))
		check(t, "counts while scheduled", core.Counts{Scheduled: 1}, s.counts(q))
		if _, ok := s.receive(q, time.Minute); ok {
			t.Fatal("received a scheduled message before its time")
		}
		s.advance(5 * time.Minute)
		got, err := s.e.Peek(s.now(), q, 0, 10)
		if err != nil || len(got) != 1 {
			t.Fatalf("peek at 5m: %v %v", got, err)
		}
		check(t, "state, enqueued at 5m", []string{"active", "5m"}, []string{got[0].State.String(), since(got[0].EnqueuedAt)})
		s.advance(10*time.Minute - time.Second)
		check(t, "counts at 14m59s", core.Counts{Active: 1}, s.counts(q))
		s.advance(time.Second)
		check(t, "left at 15m", []string(nil), s.drain(q))
		s.wantEvents(q, "expired SB-8 1 due 15m at 15m")
	})
	t.Run("EntityDefaultCountsFromScheduledTime_SB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(10*time.Minute))
		m := s.MustEnqueue(q, core.Item{Body: []byte("m"), State: core.Scheduled, ScheduledAt: s.now().Add(time.Hour)})
		check(t, "expiry", "1h10m SB-4", expiry(m))
	})
	t.Run("CancelRemovesIt_SB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(time.Hour))
		m := s.MustEnqueue(q, core.Item{Body: []byte("m"), State: core.Scheduled, ScheduledAt: s.now().Add(5 * time.Minute)})
		if _, err := s.e.Remove(s.now(), q, m.Seq); err != nil {
			t.Fatal(err)
		}
		check(t, "counts after cancel", core.Counts{}, s.counts(q))
		s.advance(2 * time.Hour)
		check(t, "arrived after cancel", []string(nil), s.drain(q))
		s.wantEvents(q)
	})
}

func TestServiceBusSubscriptionCopyTTL_SB5(t *testing.T) {
	s := MustScenario(t)
	topic := s.MustServiceBus("t", adapters.ServiceBusTopic, sbStd, sbTTL(30*time.Minute))
	short := s.MustServiceBus("t/Subscriptions/short", adapters.ServiceBusSubscription, sbStd, sbTTL(5*time.Minute))
	long := s.MustServiceBus("t/Subscriptions/long", adapters.ServiceBusSubscription, sbStd, sbTTL(2*time.Hour))
	open := s.MustServiceBus("open", adapters.ServiceBusTopic, sbStd, nil)
	openShort := s.MustServiceBus("open/Subscriptions/short", adapters.ServiceBusSubscription, sbStd, sbTTL(5*time.Minute))
	openNever := s.MustServiceBus("open/Subscriptions/never", adapters.ServiceBusSubscription, sbStd, nil)
	tests := []struct {
		name  string
		topic core.EntityKey
		subs  []core.EntityKey
		msg   core.TTL
		want  []string // each copy's expiry, in the order of subs
	}{
		{"SubscriptionDefaultShortest_SB5", topic, []core.EntityKey{short}, core.After(time.Hour), []string{"5m SB-2"}},
		{"TopicDefaultShortest_SB5", topic, []core.EntityKey{long}, core.After(time.Hour), []string{"30m SB-1"}},
		{"MessageTTLShortest_SB5", topic, []core.EntityKey{short, long}, core.After(time.Minute), []string{"1m SB-1", "1m SB-1"}},
		{"NoMessageTTLTopicDefaultCutBySubscription_SB5", topic, []core.EntityKey{short, long}, core.NoTTL, []string{"5m SB-2", "30m SB-1"}},
		{"NoMessageTTLOpenTopicSubscriptionDefault_SB5", open, []core.EntityKey{openShort, openNever}, core.NoTTL, []string{"5m SB-2", "never SB-3"}},
		{"MessageTTLOpenTopic_SB5", open, []core.EntityKey{openShort, openNever}, core.After(time.Minute), []string{"1m SB-1", "1m SB-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range s.sendToTopic(tt.topic, tt.subs, "m", tt.msg) {
				got = append(got, expiry(c))
			}
			check(t, "copies' expiry", tt.want, got)
			for _, sub := range tt.subs {
				s.drain(sub)
			}
		})
	}
	// The copies age on their own: the shorter subscription's death does
	// not touch the longer one's.
	aging := s.sendToTopic(topic, []core.EntityKey{short, long}, "aging", core.NoTTL)
	s.advance(5 * time.Minute)
	check(t, "short subscription at 5m", []string(nil), s.drain(short))
	check(t, "long subscription at 5m", core.Counts{Active: 1}, s.counts(long))
	s.wantEvents(short, fmt.Sprintf("expired SB-8 %d due 5m at 5m", aging[0].Seq))
}

// rule: SB-6
func TestServiceBusReceiveNeverReturnsExpired_SB6(t *testing.T) {
	s := MustScenario(t)
	q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(time.Minute))
	s.MustEnqueue(q, core.Item{Body: []byte("m")})
	s.tick(time.Minute) // the clock moves, nobody calls Advance
	if it, ok := s.receive(q, time.Minute); ok {
		t.Fatalf("received %q after its expiry", it.Body)
	}
	s.wantEvents(q, "expired SB-8 1 due 1m at 1m")
}

func TestServiceBusLockedMessages_SB7(t *testing.T) {
	s := MustScenario(t)
	q := s.MustServiceBus("q", sbQueue, sbStd, sbDeadLettering(time.Minute))
	for _, b := range []string{"complete-late", "abandon-late", "lock-runs-out", "lock-lost-early"} {
		s.MustEnqueue(q, core.Item{Body: []byte(b)})
	}
	a := s.MustReceive(q, 5*time.Minute)
	b := s.MustReceive(q, 5*time.Minute)
	c := s.MustReceive(q, 90*time.Second)
	s.MustReceive(q, 30*time.Second)
	s.advance(30 * time.Second) // d's lock runs out before its expiry: it is received again
	d := s.MustReceive(q, 5*time.Minute)
	check(t, "received again, delivery count", "lock-lost-early 2", fmt.Sprint(string(d.Body), " ", d.DeliveryCount))
	s.advance(40 * time.Second) // all four nominally expired, all locked
	check(t, "counts while locked past expiry", core.Counts{Locked: 4}, s.counts(q))
	if _, err := s.e.Complete(s.now(), q, a.Seq); err != nil {
		t.Fatalf("complete after nominal expiry: %v", err)
	}
	if err := s.e.Release(s.now(), q, b.Seq); err != nil { // abandon: expires at once
		t.Fatal(err)
	}
	s.advance(20 * time.Second) // c's lock runs out at 90s
	if _, err := s.e.Complete(s.now(), q, d.Seq); err != nil {
		t.Fatalf("complete under a lock taken before expiry: %v", err)
	}
	if _, err := s.e.Complete(s.now(), q, c.Seq); core.ErrorCode(err) != core.ELOCKLOST {
		t.Fatalf("complete after the lock ran out: %v, want lock lost", err)
	}
	s.wantEvents(q,
		"lock-lost SB-7 4 due 30s at 30s",
		"dead-lettered SB-7 2 due 1m at 1m10s",
		"lock-lost SB-7 3 due 1m30s at 1m30s",
		"dead-lettered SB-7 3 due 1m at 1m30s",
	)
	check(t, "dead letters", []string{"abandon-late TTLExpiredException SB-7", "lock-runs-out TTLExpiredException SB-7"}, s.deadLetters(q))
	check(t, "counts", core.Counts{InDeadLetterQueue: 2}, s.counts(q))
}

func TestServiceBusExpiredMessage_SB8(t *testing.T) {
	tests := []struct {
		name        string
		deadLetter  bool
		wantEvent   string
		wantLetters []string
		wantCounts  core.Counts
	}{
		{"FlagOnMovesToDeadLetterQueue_SB8", true, "dead-lettered SB-8 1 due 1m at 1m", []string{"m TTLExpiredException SB-8"}, core.Counts{InDeadLetterQueue: 1}},
		{"FlagOffDrops_SB8", false, "expired SB-8 1 due 1m at 1m", nil, core.Counts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustServiceBus("q", sbQueue, sbStd, func(e *adapters.ServiceBusEntity) {
				e.DefaultMessageTimeToLive = time.Minute
				e.DeadLetteringOnMessageExpiration = tt.deadLetter
			})
			s.MustEnqueue(q, core.Item{Body: []byte("m")})
			s.advance(time.Minute)
			s.wantEvents(q, tt.wantEvent)
			check(t, "dead letters", tt.wantLetters, s.deadLetters(q))
			check(t, "counts", tt.wantCounts, s.counts(q))
			// A dead letter does not expire in the dead-letter queue.
			s.advance(365 * day)
			check(t, "dead letters a year later", tt.wantLetters, s.deadLetters(q))
		})
	}
}

func TestServiceBusDeferredMessages_SB9(t *testing.T) {
	tests := []struct {
		name        string
		deadLetter  bool
		wantEvent   string
		wantLetters []string
	}{
		{"ExpiredTakeDeadLettersWhenFlagOn_SB9", true, "dead-lettered SB-9 2 due 1m at 1d", []string{"expired-when-taken TTLExpiredException SB-9"}},
		{"ExpiredTakeDropsWhenFlagOff_SB9", false, "expired SB-9 2 due 1m at 1d", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustServiceBus("q", sbQueue, sbStd, func(e *adapters.ServiceBusEntity) {
				e.DefaultMessageTimeToLive = time.Minute
				e.DeadLetteringOnMessageExpiration = tt.deadLetter
			})
			var seqs []uint64
			for _, b := range []string{"taken-live", "expired-when-taken"} {
				s.MustEnqueue(q, core.Item{Body: []byte(b)})
				m := s.MustReceive(q, time.Minute)
				if _, err := s.e.Defer(s.now(), q, m.Seq); err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, m.Seq)
			}
			it, ok, _, err := s.e.TakeDeferred(s.now(), q, seqs[0], s.now().Add(time.Minute))
			if err != nil || !ok || it.State != core.Locked {
				t.Fatalf("live deferred message: found %v state %v err %v; want it returned locked", ok, it.State, err)
			}
			if _, err := s.e.Complete(s.now(), q, seqs[0]); err != nil {
				t.Fatal(err)
			}
			s.advance(day)
			s.wantEvents(q) // deferred messages never expire on their own
			check(t, "counts a day later", core.Counts{Deferred: 1}, s.counts(q))
			peek, _ := s.e.Peek(s.now(), q, 0, 10)
			if len(peek) != 1 || peek[0].State != core.Deferred {
				t.Fatalf("peek shows %v, want the deferred message", peek)
			}
			if _, ok, _, err := s.e.TakeDeferred(s.now(), q, seqs[1], s.now().Add(time.Minute)); ok || err != nil {
				t.Fatalf("expired deferred message: found %v err %v; want not found", ok, err)
			}
			s.wantEvents(q, tt.wantEvent)
			check(t, "dead letters", tt.wantLetters, s.deadLetters(q))
			check(t, "counts after the take", core.Counts{InDeadLetterQueue: len(tt.wantLetters)}, s.counts(q))
		})
	}
}

func TestServiceBusAutoDeleteOnIdle_SB10(t *testing.T) {
	idle := func(d time.Duration) func(*adapters.ServiceBusEntity) {
		return func(e *adapters.ServiceBusEntity) { e.AutoDeleteOnIdle = d }
	}
	t.Run("QueueDeletedAfterIdle_SB10", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustServiceBus("q", sbQueue, sbStd, idle(5*time.Minute))
		in, _ := s.e.Info(s.now(), q)
		check(t, "idle deadline", "5m", since(in.IdleDeadline))
		s.advance(5*time.Minute - time.Second)
		if !s.exists(q) {
			t.Fatal("deleted before 5 minutes idle")
		}
		s.advance(time.Second)
		if s.exists(q) {
			t.Fatal("not deleted after 5 minutes idle")
		}
		s.wantEvents(q, "deleted-idle SB-10 0 due 5m at 5m")
		check(t, "Deleted hook", []string{"q"}, s.deletedIdle())
	})
	renews := []struct {
		name string
		use  func(s *scenario, q core.EntityKey)
	}{
		{"SendRenews_SB10", func(s *scenario, q core.EntityKey) { s.MustEnqueue(q, core.Item{Body: []byte("m")}) }},
		{"ReceiveRenews_SB10", func(s *scenario, q core.EntityKey) { s.receive(q, time.Minute) }},
		{"PeekRenews_SB10", func(s *scenario, q core.EntityKey) { s.e.Peek(s.now(), q, 0, 1) }},
		{"ScheduleRenews_SB10", func(s *scenario, q core.EntityKey) {
			s.MustEnqueue(q, core.Item{State: core.Scheduled, ScheduledAt: s.now().Add(time.Hour)})
		}},
		{"UpdateRenews_SB10", func(s *scenario, q core.EntityKey) {
			s.MustUpdatePolicy(q, sbPolicy(s.tb, sbQueue, sbStd, idle(5*time.Minute)))
		}},
		{"AutoForwardRenews_SB10", func(s *scenario, q core.EntityKey) { s.e.Touch(s.now(), q, core.UseForward) }},
	}
	for _, tt := range renews {
		t.Run("Queue"+tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustServiceBus("q", sbQueue, sbStd, idle(5*time.Minute))
			s.advance(4 * time.Minute)
			tt.use(s, q)
			s.advance(5*time.Minute - time.Second)
			if !s.exists(q) {
				t.Fatal("deleted less than 5 minutes after the use")
			}
			s.advance(time.Second)
			s.wantEvents(q, "deleted-idle SB-10 0 due 9m at 9m")
		})
	}
	t.Run("MaxValueNeverDeletes_SB10", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustServiceBus("q", sbQueue, sbStd, nil)
		s.advance(10 * 365 * day)
		if !s.exists(q) {
			t.Fatal("queue with AutoDeleteOnIdle = TimeSpan.MaxValue deleted")
		}
	})
	t.Run("ShorterThan5MinutesRefused_SB10", func(t *testing.T) {
		e := adapters.NewServiceBusEntity(sbQueue, sbStd)
		e.AutoDeleteOnIdle = 5*time.Minute - time.Second
		if _, err := e.Policy(); core.ErrorCode(err) != core.EINVALID {
			t.Fatalf("AutoDeleteOnIdle 4m59s: %v, want invalid", err)
		}
	})
	t.Run("SubscriptionRenewedByReceiveNotByTopicSend_SB10", func(t *testing.T) {
		s := MustScenario(t)
		topic := s.MustServiceBus("t", adapters.ServiceBusTopic, sbStd, idle(5*time.Minute))
		sub := s.MustServiceBus("t/Subscriptions/s", adapters.ServiceBusSubscription, sbStd, idle(5*time.Minute))
		subs := []core.EntityKey{sub}
		s.advance(4 * time.Minute)
		// A receive on the subscription renews it, and its topic: an
		// operation on one of its subscriptions.
		s.receive(sub, time.Minute)
		if err := s.e.Touch(s.now(), topic, core.UseChild); err != nil {
			t.Fatal(err)
		}
		s.advance(4 * time.Minute)
		s.sendToTopic(topic, subs, "m", core.NoTTL) // renews the topic only
		s.advance(time.Minute)
		if s.exists(sub) || !s.exists(topic) {
			t.Fatalf("at 9m: subscription exists %v, topic exists %v; want only the topic", s.exists(sub), s.exists(topic))
		}
		s.wantEvents(sub, "deleted-idle SB-10 0 due 9m at 9m")
		s.advance(4 * time.Minute)
		s.wantEvents(topic, "deleted-idle SB-10 0 due 13m at 13m")
		check(t, "Deleted hook", []string{"t/Subscriptions/s", "t"}, s.deletedIdle())
	})
}

func TestServiceBusDefaultTTLChangeAffectsLaterMessagesOnly_SB12(t *testing.T) {
	s := MustScenario(t)
	q := s.MustServiceBus("q", sbQueue, sbStd, sbTTL(time.Hour))
	old := s.MustEnqueue(q, core.Item{Body: []byte("old")})
	oldOwn := s.MustEnqueue(q, core.Item{Body: []byte("old-own"), TTL: core.After(30 * time.Minute)})
	s.MustUpdatePolicy(q, sbPolicy(t, sbQueue, sbStd, sbTTL(10*time.Minute)))
	nw := s.MustEnqueue(q, core.Item{Body: []byte("new")})
	nwOwn := s.MustEnqueue(q, core.Item{Body: []byte("new-own"), TTL: core.After(30 * time.Minute)})
	check(t, "expiries", []string{"1h SB-2", "30m SB-1", "10m SB-2", "10m SB-2"},
		[]string{expiry(old), expiry(oldOwn), expiry(nw), expiry(nwOwn)})
	s.advance(10 * time.Minute)
	check(t, "counts at 10m", core.Counts{Active: 2}, s.counts(q))
	s.advance(20 * time.Minute)
	check(t, "counts at 30m", core.Counts{Active: 1}, s.counts(q))
	s.advance(30 * time.Minute)
	s.wantEvents(q,
		"expired SB-8 3 due 10m at 10m",
		"expired SB-8 4 due 10m at 10m",
		"expired SB-8 2 due 30m at 30m",
		"expired SB-8 1 due 1h at 1h",
	)
}

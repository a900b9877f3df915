package adapters_test

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// deadQueue is where the RabbitMQ front-end's dead-letter hook puts dead
// letters in these scenarios, standing for the queue bound to the
// dead-letter exchange.
var deadQueue = core.EntityKey{Protocol: core.RabbitMQ, Name: "//dead"}

// MustRabbitQueue declares queue in vhost "/" with args under the given
// policies and operator policies, as the front-end does: validate, compute
// the effective settings, create the entity with their policy.
func (s *scenario) MustRabbitQueue(queue string, args map[string]any, policies, operator []adapters.RabbitPolicy) core.EntityKey {
	s.tb.Helper()
	s.register(core.RabbitMQ, s.rabbitDeadLetter)
	if _, ok := s.e.Entity(deadQueue); !ok {
		s.MustCreate(core.RabbitMQ, deadQueue.Name, "queue", core.Policy{}, nil)
	}
	if err := adapters.ValidateRabbitQueueArgs("/", queue, args); err != nil {
		s.tb.Fatal(err)
	}
	p := adapters.RabbitQueueEffective("/", queue, args, policies, operator).Policy()
	return s.MustCreate(core.RabbitMQ, "//"+queue, "queue", p, nil)
}

// rabbitDeadLetter is the RabbitMQ front-end's DeadLetterFunc (RB-9): the
// message goes to the dead-letter exchange, here straight to deadQueue with
// its reason, rule and queue in Meta.
func (s *scenario) rabbitDeadLetter(tx *core.Tx, from *core.Entity, it core.Item, why core.DeadLetterReason) {
	it.Meta = []byte(why.Code + " " + why.Rule + " from " + from.Name)
	it.TTL = core.NoTTL // the expiration property is removed
	if _, err := tx.Enqueue(deadQueue, it); err != nil {
		s.tb.Errorf("dead-lettering %q: %v", it.Body, err)
	}
}

// deadLettered returns what deadQueue holds: "body reason rule from queue".
func (s *scenario) deadLettered() []string {
	s.tb.Helper()
	its, err := s.e.Peek(s.now(), deadQueue, 0, 100)
	if err != nil {
		s.tb.Fatal(err)
	}
	var out []string
	for _, it := range its {
		out = append(out, string(it.Body)+" "+string(it.Meta))
	}
	return out
}

// publish enqueues a message with the expiration property ("" for none).
func (s *scenario) publish(q core.EntityKey, body, expiration string) core.Item {
	s.tb.Helper()
	ttl := core.NoTTL
	if expiration != "" {
		var err error
		if ttl, err = adapters.ParseRabbitExpiration(expiration); err != nil {
			s.tb.Fatal(err)
		}
	}
	return s.MustEnqueue(q, core.Item{Body: []byte(body), TTL: ttl})
}

func rabbitPolicy(name string, priority int, def map[string]any) adapters.RabbitPolicy {
	return adapters.RabbitPolicy{Name: name, VHost: "/", Pattern: "^q", ApplyTo: "queues", Priority: priority, Definition: def}
}

func TestRabbitPerQueueMessageTTL_RB1(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]any
		policies []adapters.RabbitPolicy
		want     string
	}{
		{"ShortShortIntArgument_RB1", map[string]any{"x-message-ttl": int8(100)}, nil, "100ms RB-1"},
		{"ShortIntArgument_RB1", map[string]any{"x-message-ttl": int16(1000)}, nil, "1s RB-1"},
		{"LongIntArgument_RB1", map[string]any{"x-message-ttl": int32(60000)}, nil, "1m RB-1"},
		{"LongLongIntArgument_RB1", map[string]any{"x-message-ttl": int64(60000)}, nil, "1m RB-1"},
		{"UnsignedArgument_RB1", map[string]any{"x-message-ttl": uint32(60000)}, nil, "1m RB-1"},
		{"Policy_RB1", nil, []adapters.RabbitPolicy{rabbitPolicy("ttl", 0, map[string]any{"message-ttl": float64(60000)})}, "1m RB-1"},
		{"TenYears_RB1", map[string]any{"x-message-ttl": int64(315360000000)}, nil, "3650d RB-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustRabbitQueue("q", tt.args, tt.policies, nil)
			m := s.publish(q, "m", "")
			check(t, "expiry", tt.want, expiry(m))
			ttl := m.DueAt.Sub(s.now())
			s.advance(ttl - time.Millisecond)
			check(t, "counts a millisecond before", core.Counts{Active: 1}, s.counts(q))
			s.advance(time.Millisecond)
			check(t, "counts at expiry", core.Counts{}, s.counts(q))
			s.wantEvents(q, "expired RB-3 1 due "+since(m.DueAt)+" at "+since(m.DueAt))
		})
	}
	t.Run("EachMessageAgesFromItsOwnEnqueue_RB1", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(60000)}, nil, nil)
		s.publish(q, "first", "")
		s.advance(30 * time.Second)
		s.publish(q, "second", "")
		s.advance(30 * time.Second)
		check(t, "at 60s", []string{"second"}, s.drain(q))
		s.wantEvents(q, "expired RB-3 1 due 1m at 1m")
	})
}

// rule: RB-2
func TestRabbitCopiesAgeOnTheirOwn_RB2(t *testing.T) {
	s := MustScenario(t)
	short := s.MustRabbitQueue("q.short", map[string]any{"x-message-ttl": int32(1000)}, nil, nil)
	long := s.MustRabbitQueue("q.long", map[string]any{"x-message-ttl": int32(60000)}, nil, nil)
	dl := s.MustRabbitQueue("q.dl", map[string]any{"x-message-ttl": int32(500), "x-dead-letter-exchange": "dlx"}, nil, nil)
	for _, q := range []core.EntityKey{short, long, dl} { // one publish routed to three queues
		s.publish(q, "m", "")
	}
	s.advance(time.Second)
	s.wantEvents(short, "expired RB-3 1 due 1s at 1s")
	s.wantEvents(dl, "dead-lettered RB-9 1 due 500ms at 1s")
	s.wantEvents(long)
	check(t, "dead letters", []string{"m expired RB-9 from //q.dl"}, s.deadLettered())
	check(t, "long queue", []string{"m"}, s.drain(long))
}

func TestRabbitDeadMessagesNeverDelivered_RB3(t *testing.T) {
	s := MustScenario(t)
	q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(1000)}, nil, nil)
	s.publish(q, "a", "")
	s.publish(q, "b", "")
	s.tick(time.Second) // nobody calls Advance
	if it, ok := s.receive(q, 0); ok {
		t.Fatalf("basic.deliver of a dead message %q", it.Body)
	}
	check(t, "basic.get", []string(nil), s.drain(q))
	s.wantEvents(q, "expired RB-3 1 due 1s at 1s", "expired RB-3 2 due 1s at 1s")
}

func TestRabbitTTLZero_RB4(t *testing.T) {
	zero := map[string]any{"x-message-ttl": int32(0)}
	t.Run("ExpiresOnArrivalWithoutConsumer_RB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", zero, nil, nil)
		m := s.publish(q, "m", "")
		check(t, "expiry", "0s RB-1", expiry(m))
		check(t, "counts", core.Counts{}, s.counts(q))
		check(t, "basic.get", []string(nil), s.drain(q))
		s.wantEvents(q, "expired RB-3 1 due 0s at 0s")
	})
	t.Run("PerMessageExpirationZero_RB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", nil, nil, nil)
		s.publish(q, "m", "0")
		check(t, "basic.get", []string(nil), s.drain(q))
		s.wantEvents(q, "expired RB-3 1 due 0s at 0s")
	})
	t.Run("ReadyConsumerTakesItOnArrival_RB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", zero, nil, nil)
		m := s.MustEnqueue(q, core.Item{Body: []byte("m"), State: core.Locked})
		s.advance(time.Minute)
		check(t, "counts while unacked", core.Counts{Locked: 1}, s.counts(q))
		if _, err := s.e.Complete(s.now(), q, m.Seq); err != nil { // basic.ack
			t.Fatal(err)
		}
		check(t, "counts after ack", core.Counts{}, s.counts(q))
		s.wantEvents(q)
	})
	t.Run("RequeuedAfterDeliveryExpiresAtOnce_RB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", zero, nil, nil)
		m := s.MustEnqueue(q, core.Item{Body: []byte("m"), State: core.Locked})
		s.advance(time.Second)
		if err := s.e.Release(s.now(), q, m.Seq); err != nil { // basic.nack requeue=true
			t.Fatal(err)
		}
		check(t, "basic.get", []string(nil), s.drain(q))
		s.wantEvents(q, "expired RB-3 1 due 0s at 1s")
	})
	t.Run("DeadLetteredWithDeadLetterExchange_RB4", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(0), "x-dead-letter-exchange": "dlx"}, nil, nil)
		s.publish(q, "m", "")
		s.wantEvents(q, "dead-lettered RB-9 1 due 0s at 0s")
		check(t, "dead letters", []string{"m expired RB-9 from //q"}, s.deadLettered())
	})
}

func TestRabbitPerMessageTTL_RB5(t *testing.T) {
	tests := []struct {
		name       string
		args       map[string]any
		expiration string
		want       string
	}{
		{"ExpirationAlone_RB5", nil, "500", "500ms RB-5"},
		{"LowerExpirationWins_RB5", map[string]any{"x-message-ttl": int32(1000)}, "500", "500ms RB-5"},
		{"LowerQueueTTLWins_RB5", map[string]any{"x-message-ttl": int32(1000)}, "5000", "1s RB-5"},
		{"NoExpirationTakesQueueTTL_RB1", map[string]any{"x-message-ttl": int32(1000)}, "", "1s RB-1"},
		{"PlusSign_RB5", nil, "+500", "500ms RB-5"},
		{"LeadingZeros_RB5", nil, "007", "7ms RB-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustRabbitQueue("q", tt.args, nil, nil)
			m := s.publish(q, "m", tt.expiration)
			check(t, "expiry", tt.want, expiry(m))
			s.advance(m.DueAt.Sub(s.now()))
			check(t, "basic.get at expiry", []string(nil), s.drain(q))
			s.wantEvents(q, "expired RB-3 1 due "+since(m.DueAt)+" at "+since(m.DueAt))
		})
	}
	t.Run("NoTTLNeverExpires_RB5", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", nil, nil, nil)
		m := s.publish(q, "m", "")
		check(t, "expiry", "never", expiry(m))
		s.advance(10 * 365 * day)
		check(t, "basic.get after 10 years", []string{"m"}, s.drain(q))
	})
	t.Run("BadExpirationRefused_RB5", func(t *testing.T) {
		for _, exp := range []string{"abc", "1.5", "-1", "", "315360000001"} {
			if _, err := adapters.ParseRabbitExpiration(exp); core.ErrorCode(err) != core.EPRECONDITION {
				t.Errorf("expiration %q: %v, want a 406 channel error", exp, err)
			}
		}
	})
}

func TestRabbitRequeueKeepsOriginalExpiry_RB6(t *testing.T) {
	s := MustScenario(t)
	q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(1000)}, nil, nil)
	a := s.publish(q, "a", "")
	s.advance(700 * time.Millisecond)
	got := s.MustReceive(q, 0)
	if err := s.e.Release(s.now(), q, a.Seq); err != nil { // basic.reject requeue=true
		t.Fatal(err)
	}
	again := s.MustReceive(q, 0)
	check(t, "redelivered: body, expiry", []string{"a", "1s RB-1"}, []string{string(again.Body), expiry(again)})
	check(t, "first delivery's expiry", expiry(got), expiry(again))
	if err := s.e.Release(s.now(), q, a.Seq); err != nil { // channel closed with it unacked
		t.Fatal(err)
	}
	s.advance(300 * time.Millisecond)
	check(t, "basic.get at the original expiry", []string(nil), s.drain(q))
	// Expired while unacked: requeued, it is dead at once.
	b := s.publish(q, "b", "")
	s.MustReceive(q, 0)
	s.advance(2 * time.Second)
	check(t, "counts while unacked past expiry", core.Counts{Locked: 1}, s.counts(q))
	if err := s.e.Release(s.now(), q, b.Seq); err != nil {
		t.Fatal(err)
	}
	check(t, "basic.get after requeue", []string(nil), s.drain(q))
	s.wantEvents(q, "expired RB-3 1 due 1s at 1s", "expired RB-3 2 due 2s at 3s")
}

func TestRabbitPerMessageTTLExpiresOnlyAtHead_RB7(t *testing.T) {
	for _, unacked := range []bool{false, true} {
		name := "HeadTakenByBasicGet_RB7"
		if unacked {
			name = "HeadDeliveredUnacked_RB7"
		}
		t.Run(name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustRabbitQueue("q", nil, nil, nil)
			s.publish(q, "live", "60000")
			s.publish(q, "dead-behind", "100")
			s.advance(time.Second)
			check(t, "counts with a dead message behind a live one", core.Counts{Active: 2}, s.counts(q))
			s.wantEvents(q)
			if unacked {
				s.MustReceive(q, 0)
				check(t, "counts once the head is delivered", core.Counts{Locked: 1}, s.counts(q))
			} else {
				check(t, "basic.get", []string{"live"}, s.drain(q))
			}
			check(t, "basic.get after the head left", []string(nil), s.drain(q))
			s.wantEvents(q, "expired RB-3 2 due 100ms at 1s")
		})
	}
	t.Run("QueueTTLAloneExpiresPromptly_RB7", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(1000)}, nil, nil)
		for _, b := range []string{"a", "b", "c"} {
			s.publish(q, b, "")
			s.advance(100 * time.Millisecond)
		}
		s.advance(900 * time.Millisecond)
		s.wantEvents(q, "expired RB-3 1 due 1s at 1200ms", "expired RB-3 2 due 1100ms at 1200ms", "expired RB-3 3 due 1200ms at 1200ms")
	})
}

func TestRabbitQueueTTL_RB8(t *testing.T) {
	fiveMin := map[string]any{"x-expires": int32(300000)}
	t.Run("PublishDoesNotRenew_RB8", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", fiveMin, nil, nil)
		s.advance(4 * time.Minute)
		s.publish(q, "m", "")
		s.advance(time.Minute)
		if s.exists(q) {
			t.Fatal("queue outlived x-expires though only published to")
		}
		s.wantEvents(q, "deleted-idle RB-8 0 due 5m at 5m")
		check(t, "Deleted hook", []string{"//q"}, s.deletedIdle())
	})
	renews := []struct {
		name string
		use  func(s *scenario, q core.EntityKey)
	}{
		{"RedeclareRenews_RB8", func(s *scenario, q core.EntityKey) { s.e.Touch(s.now(), q, core.UseDeclare) }},
		{"BasicGetRenews_RB8", func(s *scenario, q core.EntityKey) { s.drain(q) }},
	}
	for _, tt := range renews {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustRabbitQueue("q", fiveMin, nil, nil)
			s.advance(4 * time.Minute)
			tt.use(s, q)
			s.advance(5*time.Minute - time.Millisecond)
			if !s.exists(q) {
				t.Fatal("deleted less than x-expires after the use")
			}
			s.advance(time.Millisecond)
			s.wantEvents(q, "deleted-idle RB-8 0 due 9m at 9m")
		})
	}
	t.Run("NoTimerWhileConsumed_RB8", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", fiveMin, nil, nil)
		s.advance(4 * time.Minute)
		if _, err := s.e.Consumers(s.now(), q, 1); err != nil { // basic.consume
			t.Fatal(err)
		}
		in, _ := s.e.Info(s.now(), q)
		check(t, "idle deadline while consumed", "never", since(in.IdleDeadline))
		s.advance(time.Hour)
		if !s.exists(q) {
			t.Fatal("queue with a consumer deleted as unused")
		}
		if _, err := s.e.Consumers(s.now(), q, -1); err != nil { // basic.cancel
			t.Fatal(err)
		}
		s.advance(5*time.Minute - time.Millisecond)
		if !s.exists(q) {
			t.Fatal("deleted before x-expires from the last consumer leaving")
		}
		s.advance(time.Millisecond)
		s.wantEvents(q, "deleted-idle RB-8 0 due 1h9m at 1h9m")
	})
	t.Run("LeaseRestartsWhenServerRestarts_RB8", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", fiveMin, nil, nil)
		s.advance(4 * time.Minute)
		s.restart(10 * time.Minute)
		if !s.exists(q) {
			t.Fatal("durable queue deleted during the restart")
		}
		s.advance(5 * time.Minute)
		s.wantEvents(q, "deleted-idle RB-8 0 due 19m at 19m")
	})
	// rule: RB-12 (expiring queues do not dead-letter their messages)
	t.Run("ExpiredQueueDoesNotDeadLetterItsMessages_RB12", func(t *testing.T) {
		s := MustScenario(t)
		q := s.MustRabbitQueue("q", map[string]any{"x-expires": int32(1000), "x-dead-letter-exchange": "dlx"}, nil, nil)
		s.publish(q, "m", "")
		s.advance(time.Second)
		s.wantEvents(q, "deleted-idle RB-8 0 due 1s at 1s")
		check(t, "dead letters", []string(nil), s.deadLettered())
	})
}

func TestRabbitPoliciesAndArguments_RB10(t *testing.T) {
	ttl := func(ms float64) map[string]any { return map[string]any{"message-ttl": ms} }
	tests := []struct {
		name       string
		args       map[string]any
		policies   []adapters.RabbitPolicy
		operator   []adapters.RabbitPolicy
		wantExpiry string
		after      time.Duration
		wantEvents []string
	}{
		{"PolicyTTLLowerThanArgument_RB10", map[string]any{"x-message-ttl": int32(5000)},
			[]adapters.RabbitPolicy{rabbitPolicy("p", 0, ttl(2000))}, nil,
			"2s RB-1", 2 * time.Second, []string{"expired RB-3 1 due 2s at 2s"}},
		{"ArgumentTTLLowerThanPolicy_RB10", map[string]any{"x-message-ttl": int32(1000)},
			[]adapters.RabbitPolicy{rabbitPolicy("p", 0, ttl(2000))}, nil,
			"1s RB-1", time.Second, []string{"expired RB-3 1 due 1s at 1s"}},
		{"OperatorPolicyMergesLowerWins_RB10", nil,
			[]adapters.RabbitPolicy{rabbitPolicy("p", 0, ttl(2000))}, []adapters.RabbitPolicy{rabbitPolicy("o", 0, ttl(1500))},
			"1500ms RB-1", 1500 * time.Millisecond, []string{"expired RB-3 1 due 1500ms at 1500ms"}},
		{"OnlyHighestPriorityPolicyApplies_RB10", nil,
			[]adapters.RabbitPolicy{rabbitPolicy("low", 1, ttl(1000)), rabbitPolicy("high", 2, map[string]any{"expires": float64(600000)})}, nil,
			"never", 10 * time.Minute, []string{"deleted-idle RB-8 0 due 10m at 10m"}},
		{"PolicyExpiresLowerThanArgument_RB10", map[string]any{"x-expires": int32(600000)},
			[]adapters.RabbitPolicy{rabbitPolicy("p", 0, map[string]any{"expires": float64(300000)})}, nil,
			"never", 5 * time.Minute, []string{"deleted-idle RB-8 0 due 5m at 5m"}},
		{"PolicyDeadLetterExchange_RB10", nil,
			[]adapters.RabbitPolicy{rabbitPolicy("p", 0, map[string]any{"message-ttl": float64(1000), "dead-letter-exchange": "dlx"})}, nil,
			"1s RB-1", time.Second, []string{"dead-lettered RB-9 1 due 1s at 1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustScenario(t)
			q := s.MustRabbitQueue("q", tt.args, tt.policies, tt.operator)
			m := s.publish(q, "m", "")
			check(t, "expiry", tt.wantExpiry, expiry(m))
			s.advance(tt.after - time.Millisecond)
			s.wantEvents(q)
			s.advance(time.Millisecond)
			s.wantEvents(q, tt.wantEvents...)
		})
	}
}

func TestRabbitDeadLetterOnExpiry_RB9(t *testing.T) {
	s := MustScenario(t)
	q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "dlx"}, nil, nil)
	s.publish(q, "rejected", "")
	r := s.MustReceive(q, 0)
	// basic.reject requeue=false
	if _, err := s.e.DeadLetter(s.now(), q, r.Seq, core.DeadLetterReason{Code: "rejected", Rule: "RB-9"}); err != nil {
		t.Fatal(err)
	}
	s.publish(q, "expired", "500")
	s.advance(500 * time.Millisecond)
	s.wantEvents(q, "dead-lettered RB-9 1 due 1s at 0s", "dead-lettered RB-9 2 due 500ms at 500ms")
	want := []string{"rejected rejected RB-9 from //q", "expired expired RB-9 from //q"}
	check(t, "dead letters", want, s.deadLettered())
	// The dead letters lost their expiration: they do not expire again.
	s.advance(time.Hour)
	check(t, "dead letters an hour later", want, s.deadLettered())
}

func TestRabbitRecoveryExpiresWhatDiedWhileDown_RB13(t *testing.T) {
	s := MustScenario(t)
	q := s.MustRabbitQueue("q", map[string]any{"x-message-ttl": int32(300000), "x-dead-letter-exchange": "dlx"}, nil, nil)
	s.publish(q, "died-while-down", "60000")
	s.publish(q, "lives", "")
	s.restart(2 * time.Minute)
	s.wantEvents(q, "dead-lettered RB-9 1 due 1m at 2m")
	check(t, "dead letters", []string{"died-while-down expired RB-9 from //q"}, s.deadLettered())
	check(t, "basic.get after the restart", []string{"lives"}, s.drain(q))
}

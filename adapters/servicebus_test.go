package adapters

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

const day = 24 * time.Hour

// sbEntity returns an entity of the kind with the service's defaults
// changed by set.
func sbEntity(kind ServiceBusKind, tier ServiceBusTier, set func(*ServiceBusEntity)) ServiceBusEntity {
	e := NewServiceBusEntity(kind, tier)
	e.Namespace = "ns"
	if set != nil {
		set(&e)
	}
	return e
}

func TestServiceBusPolicy(t *testing.T) {
	queueUses := core.UseSend | core.UseReceive | core.UseUpdate | core.UseSchedule | core.UseBrowse | core.UseForward
	tests := []struct {
		name   string
		entity ServiceBusEntity
		want   core.Policy
	}{
		// rule: SB-3
		{"QueueDefaultsNeverExpire", sbEntity(ServiceBusQueue, ServiceBusStandard, nil), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever, IdleTTL: core.Forever, IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// rule: SB-2
		{"EntityTTLIsDefaultAndCeiling", sbEntity(ServiceBusQueue, ServiceBusPremium, func(e *ServiceBusEntity) {
			e.DefaultMessageTimeToLive = 10 * time.Minute
		}), core.Policy{
			DefaultTTL: core.After(10 * time.Minute), MaxTTL: core.After(10 * time.Minute),
			IdleTTL: core.Forever, IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// rule: SB-8
		{"DeadLetteringOnExpiration", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) {
			e.DeadLetteringOnMessageExpiration = true
		}), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever, OnExpire: core.DeadLetter,
			IdleTTL: core.Forever, IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// rule: SB-3
		{"BasicTierDefaultsTo14Days", sbEntity(ServiceBusQueue, ServiceBusBasic, nil), core.Policy{
			DefaultTTL: core.After(14 * day), MaxTTL: core.After(14 * day),
			IdleTTL: core.Forever, IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// rule: SB-3
		{"BasicTierCapsAt14Days", sbEntity(ServiceBusQueue, ServiceBusBasic, func(e *ServiceBusEntity) {
			e.DefaultMessageTimeToLive = 30 * day
		}), core.Policy{
			DefaultTTL: core.After(14 * day), MaxTTL: core.After(14 * day),
			IdleTTL: core.Forever, IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// rule: SB-3
		{"BasicTierKeepsShorterTTL", sbEntity(ServiceBusQueue, ServiceBusBasic, func(e *ServiceBusEntity) {
			e.DefaultMessageTimeToLive = time.Hour
		}), core.Policy{
			DefaultTTL: core.After(time.Hour), MaxTTL: core.After(time.Hour),
			IdleTTL: core.Forever, IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// rule: SB-10
		{"QueueIdleDeletion", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) {
			e.AutoDeleteOnIdle = 5 * time.Minute
		}), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever,
			IdleTTL: core.After(5 * time.Minute), IdleUses: queueUses, Rules: serviceBusRules,
		}},
		// issue 14.7, rule: SS-3 (a session entity's messages are held in
		// sessions, whose locks run out by SS-3)
		{"QueueRequiresSession", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) {
			e.RequiresSession = true
		}), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever, IdleTTL: core.Forever, IdleUses: queueUses, Sessions: true,
			Rules: withSessionLock(serviceBusRules),
		}},
		{"SubscriptionRequiresSession", sbEntity(ServiceBusSubscription, ServiceBusStandard, func(e *ServiceBusEntity) {
			e.RequiresSession = true
		}), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever, IdleTTL: core.Forever, Sessions: true,
			IdleUses: core.UseReceive | core.UseUpdate | core.UseRule | core.UseBrowse | core.UseForward,
			Rules:    withSessionLock(serviceBusRules),
		}},
		// rule: SB-10
		{"TopicIdleCountsSubscriptionOperations", sbEntity(ServiceBusTopic, ServiceBusStandard, func(e *ServiceBusEntity) {
			e.AutoDeleteOnIdle = time.Hour
		}), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever, IdleTTL: core.After(time.Hour),
			IdleUses: core.UseSend | core.UseUpdate | core.UseSchedule | core.UseChild | core.UseForward,
			Rules:    serviceBusRules,
		}},
		// rule: SB-10
		{"SubscriptionIdleCountsReceivesRulesBrowses", sbEntity(ServiceBusSubscription, ServiceBusStandard, func(e *ServiceBusEntity) {
			e.AutoDeleteOnIdle = time.Hour
		}), core.Policy{
			DefaultTTL: core.Forever, MaxTTL: core.Forever, IdleTTL: core.After(time.Hour),
			IdleUses: core.UseReceive | core.UseUpdate | core.UseRule | core.UseBrowse | core.UseForward,
			Rules:    serviceBusRules,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.entity.Policy()
			if err != nil {
				t.Fatalf("Policy: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("Policy() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// withSessionLock returns rules with the session lock's rule, SS-3.
func withSessionLock(r core.RuleIDs) core.RuleIDs {
	r.SessionLock = "SS-3"
	return r
}

func TestServiceBusPolicyRules(t *testing.T) {
	p, err := NewServiceBusEntity(ServiceBusQueue, ServiceBusStandard).Policy()
	if err != nil {
		t.Fatal(err)
	}
	want := core.RuleIDs{ItemTTL: "SB-1", DefaultTTL: "SB-2", Ceiling: "SB-2", Never: "SB-3", Scheduled: "SB-4",
		Expire: "SB-8", LockLost: "SB-7", Idle: "SB-10", Deferred: "SB-9"}
	if diff := cmp.Diff(want, p.Rules); diff != "" {
		t.Errorf("Rules mismatch (-want +got):\n%s", diff)
	}
	// rule: SB-12
	if p.Retroactive {
		t.Error("Retroactive = true; a changed entity TTL must apply to messages enqueued afterwards only")
	}
}

func TestServiceBusEffectiveTTL(t *testing.T) {
	tenMin := sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = 10 * time.Minute })
	never := sbEntity(ServiceBusQueue, ServiceBusStandard, nil)
	tests := []struct {
		name     string
		entity   ServiceBusEntity
		msg      core.TTL
		enqueued time.Time
		want     time.Time // zero: never
	}{
		// rule: SB-1
		{"ExpiresAtEnqueuedPlusTTL", tenMin, core.After(time.Minute), t0, t0.Add(time.Minute)},
		// rule: SB-2
		{"NoMessageTTLTakesEntityDefault", tenMin, core.NoTTL, t0, t0.Add(10 * time.Minute)},
		// rule: SB-2
		{"LongerMessageTTLCutToEntityDefault", tenMin, core.After(time.Hour), t0, t0.Add(10 * time.Minute)},
		// rule: SB-3
		{"NothingSetNeverExpires", never, core.NoTTL, t0, time.Time{}},
		// rule: SB-3
		{"MessageTTLMaxValueNeverExpires", never, core.Forever, t0, time.Time{}},
		// rule: SB-4
		{"ScheduledCountsFromScheduledEnqueueTime", tenMin, core.NoTTL, t0.Add(5 * time.Minute), t0.Add(15 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.entity.Policy()
			if err != nil {
				t.Fatal(err)
			}
			if got := dueAt(p, tt.msg, tt.enqueued, tt.enqueued); !got.Equal(tt.want) {
				t.Errorf("due = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServiceBusCopyTTL(t *testing.T) {
	policy := func(ttl time.Duration) core.Policy {
		p, err := sbEntity(ServiceBusTopic, ServiceBusStandard, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = ttl }).Policy()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name            string
		msg             core.TTL
		topic, sub      time.Duration
		wantCopy, final core.TTL
	}{
		// rule: SB-5
		{"MessageShortest", core.After(time.Minute), time.Hour, 2 * time.Hour, core.After(time.Minute), core.After(time.Minute)},
		// rule: SB-5
		{"TopicShortest", core.After(time.Hour), 10 * time.Minute, 2 * time.Hour, core.After(10 * time.Minute), core.After(10 * time.Minute)},
		// rule: SB-5
		{"SubscriptionShortest", core.After(time.Hour), 2 * time.Hour, 5 * time.Minute, core.After(time.Hour), core.After(5 * time.Minute)},
		// rule: SB-5
		{"NoMessageTTLTopicShorter", core.NoTTL, 10 * time.Minute, time.Hour, core.After(10 * time.Minute), core.After(10 * time.Minute)},
		// rule: SB-5
		{"NoMessageTTLSubscriptionShorter", core.NoTTL, time.Hour, 10 * time.Minute, core.After(time.Hour), core.After(10 * time.Minute)},
		// rule: SB-5
		{"NoMessageTTLTopicNeverSubscriptionDefault", core.NoTTL, TimeSpanMax, 10 * time.Minute, core.NoTTL, core.After(10 * time.Minute)},
		// rule: SB-5
		{"NothingSetNeverExpires", core.NoTTL, TimeSpanMax, TimeSpanMax, core.NoTTL, core.Forever},
		// rule: SB-5
		{"MessageTTLTopicNever", core.After(time.Minute), TimeSpanMax, TimeSpanMax, core.After(time.Minute), core.After(time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := ServiceBusCopyTTL(policy(tt.topic), tt.msg)
			if diff := cmp.Diff(tt.wantCopy, cp, cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("copy TTL mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.final, effectiveTTL(policy(tt.sub), cp), cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("effective TTL in the subscription mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceBusValidate(t *testing.T) {
	tests := []struct {
		name   string
		entity ServiceBusEntity
		want   string // "" for valid
	}{
		{"DefaultsAreValid", sbEntity(ServiceBusQueue, ServiceBusStandard, nil), ""},
		{"OneSecondTTLIsValid", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = time.Second }), ""},
		{"ZeroTTL", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = 0 }),
			"The property value for 'DefaultMessageTimeToLive' must be between 00:00:01 and 10675199.02:48:05.4775807."},
		{"NegativeTTL", sbEntity(ServiceBusSubscription, ServiceBusStandard, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = -time.Minute }),
			"The property value for 'DefaultMessageTimeToLive' must be between 00:00:01 and 10675199.02:48:05.4775807."},
		{"SubSecondTTL", sbEntity(ServiceBusTopic, ServiceBusStandard, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = 500 * time.Millisecond }),
			"The property value for 'DefaultMessageTimeToLive' must be between 00:00:01 and 10675199.02:48:05.4775807."},
		{"BasicTierZeroTTL", sbEntity(ServiceBusQueue, ServiceBusBasic, func(e *ServiceBusEntity) { e.DefaultMessageTimeToLive = 0 }),
			"The property value for 'DefaultMessageTimeToLive' must be between 00:00:01 and 14.00:00:00 when the namespace 'ns' is using 'Basic' tier."},
		// rule: SB-10
		{"AutoDeleteOnIdleFiveMinutesIsValid", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) { e.AutoDeleteOnIdle = 5 * time.Minute }), ""},
		// rule: SB-10
		{"AutoDeleteOnIdleUnderFiveMinutes", sbEntity(ServiceBusQueue, ServiceBusStandard, func(e *ServiceBusEntity) { e.AutoDeleteOnIdle = 5*time.Minute - time.Second }),
			"The property value for 'AutoDeleteOnIdle' must be between 00:05:00 and 10675199.02:48:05.4775807."},
		// rule: SB-10
		{"AutoDeleteOnIdleZero", sbEntity(ServiceBusSubscription, ServiceBusStandard, func(e *ServiceBusEntity) { e.AutoDeleteOnIdle = 0 }),
			"The property value for 'AutoDeleteOnIdle' must be between 00:05:00 and 10675199.02:48:05.4775807."},
		{"BasicTierAutoDeleteOnIdle", sbEntity(ServiceBusQueue, ServiceBusBasic, func(e *ServiceBusEntity) { e.AutoDeleteOnIdle = time.Hour }),
			"The property 'AutoDeleteOnIdle' cannot be set when creating a Queue because the namespace 'ns' is using 'Basic' tier."},
		{"BasicTierTopic", sbEntity(ServiceBusTopic, ServiceBusBasic, nil),
			"The namespace 'ns' is using 'Basic' tier, which has no topics or subscriptions. This operation is only supported in 'Standard' or 'Premium' tier."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.entity.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if code := core.ErrorCode(err); code != core.EINVALID {
				t.Fatalf("code = %q (%v), want %q", code, err, core.EINVALID)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("message mismatch (-want +got):\n%s", diff)
			}
			if _, perr := tt.entity.Policy(); perr == nil {
				t.Error("Policy() accepted an invalid entity")
			}
		})
	}
}

func TestParseTimeSpan(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"P14D", 14 * day},
		{"PT10M", 10 * time.Minute},
		{"PT1H", time.Hour},
		{"PT30S", 30 * time.Second},
		{"PT0.5S", 500 * time.Millisecond},
		{"P1DT2H3M4.5S", day + 2*time.Hour + 3*time.Minute + 4500*time.Millisecond},
		{"P1Y", 365 * day},
		{"P1M", 30 * day},
		{"P13M", 395 * day},
		{"PT0S", 0},
		{"-PT1M", -time.Minute},
		{"P10675199DT2H48M5.4775807S", TimeSpanMax},
		{"P20000D", 20000 * day},
		{"P200000D", TimeSpanMax},
		{"00:10:00", 10 * time.Minute},
		{"1.00:00:00", day},
		{"14", 14 * day},
		{"01:30", 90 * time.Minute},
		{"00:00:00.5", 500 * time.Millisecond},
		{"2.03:04:05.0060000", 2*day + 3*time.Hour + 4*time.Minute + 5*time.Second + 6*time.Millisecond},
		{"1:02:03:04", day + 2*time.Hour + 3*time.Minute + 4*time.Second},
		{"10675199.02:48:05.4775807", TimeSpanMax},
		{"-00:01:00", -time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTimeSpan(tt.in)
			if err != nil {
				t.Fatalf("ParseTimeSpan(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseTimeSpan(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "P", "PT", "P1H", "PT1D", "P1DT", "PM1", "P1.5D", "abc", "25:00:00", "00:60:00", "1.2.3", "00:00:00.12345678", "P10675200D", "P1D1D"} {
		t.Run("Invalid"+bad, func(t *testing.T) {
			if d, err := ParseTimeSpan(bad); core.ErrorCode(err) != core.EINVALID {
				t.Errorf("ParseTimeSpan(%q) = %v, %v; want an EINVALID error", bad, d, err)
			}
		})
	}
}

func TestFormatTimeSpan(t *testing.T) {
	tests := []struct {
		in       time.Duration
		net, xml string
	}{
		{0, "00:00:00", "PT0S"},
		{10 * time.Minute, "00:10:00", "PT10M"},
		{14 * day, "14.00:00:00", "P14D"},
		{day + 2*time.Hour + 3*time.Minute + 4500*time.Millisecond, "1.02:03:04.5000000", "P1DT2H3M4.5S"},
		{-time.Minute, "-00:01:00", "-PT1M"},
		{TimeSpanMax, "10675199.02:48:05.4775807", "P10675199DT2H48M5.4775807S"},
	}
	for _, tt := range tests {
		t.Run(tt.net, func(t *testing.T) {
			if got := FormatTimeSpan(tt.in); got != tt.net {
				t.Errorf("FormatTimeSpan(%v) = %q, want %q", tt.in, got, tt.net)
			}
			if got := FormatXMLDuration(tt.in); got != tt.xml {
				t.Errorf("FormatXMLDuration(%v) = %q, want %q", tt.in, got, tt.xml)
			}
			for _, s := range []string{tt.net, tt.xml} {
				if back, err := ParseTimeSpan(s); err != nil || back != tt.in {
					t.Errorf("ParseTimeSpan(%q) = %v, %v; want %v", s, back, err, tt.in)
				}
			}
		})
	}
}

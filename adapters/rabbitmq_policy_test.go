package adapters

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

func TestValidateRabbitPolicy(t *testing.T) {
	policy := func(def map[string]any) RabbitPolicy {
		return RabbitPolicy{Name: "p", VHost: "/", Pattern: ".*", ApplyTo: "queues", Definition: def}
	}
	failed := func(lines string) string { return "Validation failed\n\n" + lines + "\n" }
	tests := []struct {
		name     string
		policy   RabbitPolicy
		operator bool
		want     string
	}{
		// rule: RB-10
		{"MessageTTL", policy(map[string]any{"message-ttl": float64(60000)}), false, ""},
		// rule: RB-10
		{"MessageTTLJSONNumber", policy(map[string]any{"message-ttl": json.Number("0")}), false, ""},
		// rule: RB-10
		{"NegativeMessageTTL", policy(map[string]any{"message-ttl": float64(-5)}), false, failed("-5 is not a valid message TTL")},
		// rule: RB-10
		{"FractionalMessageTTL", policy(map[string]any{"message-ttl": 1.5}), false, failed("1.5 is not a valid message TTL")},
		// rule: RB-10
		{"StringMessageTTL", policy(map[string]any{"message-ttl": "60000"}), false, failed(`<<"60000">> is not a valid message TTL`)},
		// rule: RB-10
		{"ZeroExpires", policy(map[string]any{"expires": json.Number("0")}), false, failed("0 is not a valid queue expiry")},
		// rule: RB-10
		{"NullExpires", policy(map[string]any{"expires": nil}), false, failed("null is not a valid queue expiry")},
		// rule: RB-10
		{"DeadLetterExchangeNumber", policy(map[string]any{"dead-letter-exchange": float64(1)}), false,
			failed("1 is not a valid dead letter exchange name")},
		// rule: RB-10
		{"FirstBadKeyInOrder", policy(map[string]any{"message-ttl": float64(-1), "expires": float64(0)}), false,
			failed("0 is not a valid queue expiry")},
		// rule: RB-10
		{"EmptyDefinition", policy(map[string]any{}), false, failed("no policy provided")},
		// rule: RB-10
		{"UnknownKey", policy(map[string]any{"message-ttl": float64(1), "colour": "blue"}), false,
			failed(`[{<<"colour">>,<<"blue">>}] are not recognised policy settings`)},
		{"MirroringKeysAccepted", policy(map[string]any{"ha-mode": "all"}), false, ""},
		// rule: RB-10
		{"BadApplyTo", RabbitPolicy{Pattern: ".*", ApplyTo: "queue", Definition: map[string]any{"expires": float64(1)}}, false,
			failed("apply-to 'queue' unrecognised; should be 'queues', 'exchanges' or 'all'")},
		// rule: RB-10
		{"OperatorPolicyTTL", policy(map[string]any{"message-ttl": float64(1500), "max-length": float64(10)}), true, ""},
		// rule: RB-10
		{"OperatorPolicyNoDLX", policy(map[string]any{"dead-letter-exchange": "x"}), true,
			failed(`[{<<"dead-letter-exchange">>,<<"x">>}] are not recognised policy settings`)},
		// rule: RB-10
		{"OperatorPolicyNegativeExpires", policy(map[string]any{"expires": float64(-1)}), true, failed("-1 is not a valid queue expiry")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			validate := ValidateRabbitPolicy
			if tt.operator {
				validate = ValidateRabbitOperatorPolicy
			}
			err := validate(tt.policy)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if code := core.ErrorCode(err); code != core.EINVALID {
				t.Fatalf("code = %q (err %v), want %q", code, err, core.EINVALID)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("reason mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRabbitQueueEffective(t *testing.T) {
	ms := func(n int) core.TTL { return core.After(time.Duration(n) * time.Millisecond) }
	str := func(s string) *string { return &s }
	i64 := func(n int64) *int64 { return &n }
	pol := func(name string, prio int, pattern string, def map[string]any) RabbitPolicy {
		return RabbitPolicy{Name: name, VHost: "/", Pattern: pattern, ApplyTo: "queues", Priority: prio, Definition: def}
	}
	// The end-to-end case observed on RabbitMQ 3.10.8 (rabbitmq.md A5).
	userP := []RabbitPolicy{pol("P", 0, `^pol\.`, map[string]any{"message-ttl": float64(2000), "dead-letter-exchange": "P"})}
	opP := []RabbitPolicy{pol("O", 0, `^pol\.`, map[string]any{"message-ttl": float64(1500)})}
	merged := map[string]any{"message-ttl": float64(1500), "dead-letter-exchange": "P"}
	tests := []struct {
		name     string
		queue    string
		args     map[string]any
		policies []RabbitPolicy
		operator []RabbitPolicy
		want     RabbitQueueSettings
	}{
		{"NoPolicies", "q", map[string]any{"x-message-ttl": int32(500), "x-expires": int32(600)}, nil, nil,
			RabbitQueueSettings{Type: "classic", MessageTTL: ms(500), Expires: ms(600), Overflow: "drop-head"}},
		// rule: RB-10
		{"ArgTTLLowerAndArgDLXWins", "pol.a", map[string]any{"x-message-ttl": int32(500), "x-dead-letter-exchange": "A"}, userP, opP,
			RabbitQueueSettings{Type: "classic", MessageTTL: ms(500), DeadLetterExchange: str("A"), Overflow: "drop-head",
				PolicyName: "P", OperatorPolicyName: "O", EffectiveDefinition: merged}},
		// rule: RB-10
		{"OperatorTTLLowerThanArg", "pol.b", map[string]any{"x-message-ttl": int32(5000)}, userP, opP,
			RabbitQueueSettings{Type: "classic", MessageTTL: ms(1500), DeadLetterExchange: str("P"), Overflow: "drop-head",
				PolicyName: "P", OperatorPolicyName: "O", EffectiveDefinition: merged}},
		// rule: RB-10
		{"NoArgsPolicyAndOperator", "pol.c", nil, userP, opP,
			RabbitQueueSettings{Type: "classic", MessageTTL: ms(1500), DeadLetterExchange: str("P"), Overflow: "drop-head",
				PolicyName: "P", OperatorPolicyName: "O", EffectiveDefinition: merged}},
		// rule: RB-10
		{"PatternNotMatching", "other", nil, userP, opP, RabbitQueueSettings{Type: "classic", Overflow: "drop-head"}},
		// rule: RB-10
		{"HighestPriorityOnlyNoMerging", "q", nil, []RabbitPolicy{
			pol("low", 1, ".*", map[string]any{"message-ttl": float64(1000)}),
			pol("high", 2, ".*", map[string]any{"expires": float64(5000)}),
		}, nil, RabbitQueueSettings{Type: "classic", Expires: ms(5000), Overflow: "drop-head", PolicyName: "high",
			EffectiveDefinition: map[string]any{"expires": float64(5000)}}},
		// rule: RB-10
		{"TieTakesFirstName", "q", nil, []RabbitPolicy{
			pol("b", 0, ".*", map[string]any{"message-ttl": float64(2)}),
			pol("a", 0, ".*", map[string]any{"message-ttl": float64(1)}),
		}, nil, RabbitQueueSettings{Type: "classic", MessageTTL: ms(1), Overflow: "drop-head", PolicyName: "a",
			EffectiveDefinition: map[string]any{"message-ttl": float64(1)}}},
		// rule: RB-10
		{"OtherVhostExchangesAndUnsupportedKeysSkipped", "q", nil, []RabbitPolicy{
			{Name: "vhost", VHost: "other", Pattern: ".*", Priority: 9, Definition: map[string]any{"expires": float64(1)}},
			{Name: "exchanges", VHost: "/", Pattern: ".*", ApplyTo: "exchanges", Priority: 9, Definition: map[string]any{"expires": float64(2)}},
			pol("quorum-only", 9, ".*", map[string]any{"expires": float64(3), "delivery-limit": float64(5)}),
			{Name: "all", VHost: "/", Pattern: "^q$", ApplyTo: "all", Definition: map[string]any{"expires": float64(4)}},
		}, nil, RabbitQueueSettings{Type: "classic", Expires: ms(4), Overflow: "drop-head", PolicyName: "all",
			EffectiveDefinition: map[string]any{"expires": float64(4)}}},
		// rule: RB-10
		{"ExpiresTakesLower", "q", map[string]any{"x-expires": int32(5000)}, []RabbitPolicy{pol("p", 0, ".*", map[string]any{"expires": float64(1000)})}, nil,
			RabbitQueueSettings{Type: "classic", Expires: ms(1000), Overflow: "drop-head", PolicyName: "p",
				EffectiveDefinition: map[string]any{"expires": float64(1000)}}},
		// rule: RB-10
		{"QuorumExpiresPolicyWins", "q", map[string]any{"x-queue-type": "quorum", "x-expires": int32(1000)},
			[]RabbitPolicy{pol("p", 0, ".*", map[string]any{"expires": float64(5000)})}, nil,
			RabbitQueueSettings{Type: "quorum", Expires: ms(5000), Overflow: "drop-head", PolicyName: "p",
				EffectiveDefinition: map[string]any{"expires": float64(5000)}}},
		// rule: RB-10
		{"RoutingKeyArgWinsDLXFromPolicy", "q", map[string]any{"x-dead-letter-routing-key": "arg-key"},
			[]RabbitPolicy{pol("p", 0, ".*", map[string]any{"dead-letter-exchange": "dlx", "dead-letter-routing-key": "pol-key"})}, nil,
			RabbitQueueSettings{Type: "classic", DeadLetterExchange: str("dlx"), DeadLetterRoutingKey: str("arg-key"), Overflow: "drop-head",
				PolicyName: "p", EffectiveDefinition: map[string]any{"dead-letter-exchange": "dlx", "dead-letter-routing-key": "pol-key"}}},
		// rule: RB-10
		{"OperatorMaxLengthLowerWins", "q", map[string]any{"x-overflow": "reject-publish"},
			[]RabbitPolicy{pol("p", 0, ".*", map[string]any{"max-length": float64(10), "overflow": "drop-head"})},
			[]RabbitPolicy{pol("o", 0, ".*", map[string]any{"max-length": json.Number("5")})},
			RabbitQueueSettings{Type: "classic", MaxLength: i64(5), Overflow: "reject-publish", PolicyName: "p", OperatorPolicyName: "o",
				EffectiveDefinition: map[string]any{"max-length": json.Number("5"), "overflow": "drop-head"}}},
		// rule: RB-10
		{"OperatorPolicyAlone", "q", map[string]any{"x-message-ttl": int64(9000)}, nil,
			[]RabbitPolicy{pol("o", 0, ".*", map[string]any{"message-ttl": float64(3000)})},
			RabbitQueueSettings{Type: "classic", MessageTTL: ms(3000), Overflow: "drop-head", OperatorPolicyName: "o",
				EffectiveDefinition: map[string]any{"message-ttl": float64(3000)}}},
		// rule: RB-10
		{"QuorumDeliveryLimit", "q", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": int32(20)},
			[]RabbitPolicy{pol("p", 0, ".*", map[string]any{"delivery-limit": float64(3)})}, nil,
			RabbitQueueSettings{Type: "quorum", DeliveryLimit: i64(3), Overflow: "drop-head", PolicyName: "p",
				EffectiveDefinition: map[string]any{"delivery-limit": float64(3)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RabbitQueueEffective("/", tt.queue, tt.args, tt.policies, tt.operator)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("RabbitQueueEffective mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// rule: RB-9
func TestRabbitPolicyDeadLetterExchangeDeadLetters(t *testing.T) {
	s := RabbitQueueEffective("/", "q", nil, []RabbitPolicy{{Name: "p", VHost: "/", Pattern: ".*",
		Definition: map[string]any{"dead-letter-exchange": "dlx", "message-ttl": float64(100)}}}, nil)
	p := s.Policy()
	if p.OnExpire != core.DeadLetter || p.Rules.Expire != "RB-9" {
		t.Errorf("OnExpire = %v, rule %q; want dead-letter by RB-9", p.OnExpire, p.Rules.Expire)
	}
}

package adapters

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// wantPrecondition checks that err is a 406 PRECONDITION_FAILED error with
// the text, or nil when want is "".
func wantPrecondition(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if code := core.ErrorCode(err); code != core.EPRECONDITION {
		t.Fatalf("code = %q (err %v), want %q", code, err, core.EPRECONDITION)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("text mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateRabbitQueueArgs(t *testing.T) {
	const pre = "invalid arg 'x-message-ttl' for queue 'q' in vhost '/': "
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"NoArgs", nil, ""},
		// rule: RB-1
		{"MessageTTLInt8", map[string]any{"x-message-ttl": int8(5)}, ""},
		// rule: RB-1
		{"MessageTTLEveryIntegerWidth", map[string]any{"x-message-ttl": uint8(5), "x-expires": int16(5), "x-max-length": uint16(5),
			"x-max-length-bytes": int32(5), "x-max-priority": uint32(5)}, ""},
		// rule: RB-1
		{"MessageTTLInt64", map[string]any{"x-message-ttl": int64(60000)}, ""},
		// rule: RB-1
		{"MessageTTLGoInt", map[string]any{"x-message-ttl": 60000}, ""},
		// rule: RB-1
		{"MessageTTLUint64", map[string]any{"x-message-ttl": uint64(60000)}, ""},
		// rule: RB-1
		{"MessageTTLZero", map[string]any{"x-message-ttl": int32(0)}, ""},
		// rule: RB-1
		{"MessageTTLTenYears", map[string]any{"x-message-ttl": int64(315360000000)}, ""},
		// rule: RB-11
		{"MessageTTLNegative", map[string]any{"x-message-ttl": int32(-1)}, pre + "{value_negative,-1}"},
		// rule: RB-11
		{"MessageTTLString", map[string]any{"x-message-ttl": "1000"}, pre + `"expected integer, got longstr"`},
		// rule: RB-11
		{"MessageTTLBytes", map[string]any{"x-message-ttl": []byte("1000")}, pre + `"expected integer, got longstr"`},
		// rule: RB-11
		{"MessageTTLDouble", map[string]any{"x-message-ttl": 1000.0}, pre + `"expected integer, got double"`},
		// rule: RB-11
		{"MessageTTLFloat", map[string]any{"x-message-ttl": float32(1000)}, pre + `"expected integer, got float"`},
		// rule: RB-11
		{"MessageTTLBool", map[string]any{"x-message-ttl": true}, pre + `"expected integer, got bool"`},
		// rule: RB-11
		{"MessageTTLTooLarge", map[string]any{"x-message-ttl": int64(315360000001)}, pre + "{value_too_large,315360000001}"},
		// rule: RB-11
		{"MessageTTLUint64ReadSigned", map[string]any{"x-message-ttl": uint64(math.MaxUint64)}, pre + "{value_negative,-1}"},
		// rule: RB-8
		{"ExpiresOne", map[string]any{"x-expires": int32(1)}, ""},
		// rule: RB-8
		{"ExpiresZero", map[string]any{"x-expires": int32(0)}, "invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}"},
		// rule: RB-8
		{"ExpiresNegative", map[string]any{"x-expires": int16(-5)}, "invalid arg 'x-expires' for queue 'q' in vhost '/': {value_negative,-5}"},
		// rule: RB-8
		{"ExpiresTooLarge", map[string]any{"x-expires": int64(1e12)}, "invalid arg 'x-expires' for queue 'q' in vhost '/': {value_too_large,1000000000000}"},
		// rule: RB-11
		{"ExpiresCheckedBeforeMessageTTL", map[string]any{"x-expires": int32(0), "x-message-ttl": int32(-1)},
			"invalid arg 'x-expires' for queue 'q' in vhost '/': {value_zero,0}"},
		// rule: RB-9
		{"DeadLetterExchangeAndKey", map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "k"}, ""},
		// rule: RB-9
		{"DeadLetterToDefaultExchange", map[string]any{"x-dead-letter-exchange": ""}, ""},
		// rule: RB-11
		{"RoutingKeyWithoutDLX", map[string]any{"x-dead-letter-routing-key": "k"},
			"invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': routing_key_but_no_dlx_defined"},
		// rule: RB-11
		{"DLXNotAString", map[string]any{"x-dead-letter-exchange": int32(5)},
			"invalid type 'signedint' for arg 'x-dead-letter-exchange' in queue 'q' in vhost '/'"},
		// rule: RB-11
		{"DLXTypeCheckedFirst", map[string]any{"x-dead-letter-exchange": int32(5), "x-expires": int32(0)},
			"invalid type 'signedint' for arg 'x-dead-letter-exchange' in queue 'q' in vhost '/'"},
		// rule: RB-11
		{"RoutingKeyNotAString", map[string]any{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": int8(1)},
			"invalid arg 'x-dead-letter-routing-key' for queue 'q' in vhost '/': {unacceptable_type,byte}"},
		// rule: RB-11
		{"MaxLengthNegative", map[string]any{"x-max-length": int32(-1)}, "invalid arg 'x-max-length' for queue 'q' in vhost '/': {value_negative,-1}"},
		// rule: RB-11
		{"MaxLengthBytesString", map[string]any{"x-max-length-bytes": "10"},
			`invalid arg 'x-max-length-bytes' for queue 'q' in vhost '/': "expected integer, got longstr"`},
		// rule: RB-11
		{"OverflowUnknown", map[string]any{"x-overflow": "drop-tail"}, "invalid arg 'x-overflow' for queue 'q' in vhost '/': invalid_overflow"},
		{"OverflowRejectPublishDLX", map[string]any{"x-overflow": "reject-publish-dlx"}, ""},
		// rule: RB-11
		{"MaxPriorityTooLarge", map[string]any{"x-max-priority": int32(256)}, "invalid arg 'x-max-priority' for queue 'q' in vhost '/': {max_value_exceeded,256}"},
		// rule: RB-11
		{"QueueModeUnknown", map[string]any{"x-queue-mode": "fast"}, `invalid arg 'x-queue-mode' for queue 'q' in vhost '/': "unsupported queue mode 'fast'"`},
		// rule: RB-11
		{"QueueVersionThree", map[string]any{"x-queue-version": int32(3)}, `invalid arg 'x-queue-version' for queue 'q' in vhost '/': "unsupported queue version '3'"`},
		// rule: RB-11
		{"SingleActiveConsumerString", map[string]any{"x-single-active-consumer": "yes"},
			"invalid arg 'x-single-active-consumer' for queue 'q' in vhost '/': {unacceptable_type,longstr}"},
		// rule: RB-11
		{"QueueTypeUnknown", map[string]any{"x-queue-type": "fancy"}, `invalid arg 'x-queue-type' for queue 'q' in vhost '/': "unsupported queue type 'fancy'"`},
		// rule: RB-11
		{"QueueTypeNotAString", map[string]any{"x-queue-type": int32(1)}, "invalid arg 'x-queue-type' for queue 'q' in vhost '/': {unacceptable_type,signedint}"},
		// rule: RB-11
		{"QueueTypeCheckedBeforeOthers", map[string]any{"x-queue-type": "fancy", "x-expires": int32(0)},
			`invalid arg 'x-queue-type' for queue 'q' in vhost '/': "unsupported queue type 'fancy'"`},
		// rule: RB-11
		{"ClassicRefusesQuorumArgs", map[string]any{"x-delivery-limit": int32(5)},
			"invalid arg 'x-delivery-limit' for queue 'q' in vhost '/' of queue type rabbit_classic_queue"},
		// rule: RB-1
		{"QuorumMessageTTL", map[string]any{"x-queue-type": "quorum", "x-message-ttl": int32(100), "x-delivery-limit": int32(5)}, ""},
		// rule: RB-11
		{"QuorumMessageTTLNegative", map[string]any{"x-queue-type": "quorum", "x-message-ttl": int32(-1)}, pre + "{value_negative,-1}"},
		// rule: RB-11
		{"QuorumRefusesMaxPriority", map[string]any{"x-queue-type": "quorum", "x-max-priority": int32(5)},
			"invalid arg 'x-max-priority' for queue 'q' in vhost '/' of queue type rabbit_quorum_queue"},
		// rule: RB-11
		{"QuorumInitialGroupSizeZero", map[string]any{"x-queue-type": "quorum", "x-quorum-initial-group-size": int32(0)},
			"invalid arg 'x-quorum-initial-group-size' for queue 'q' in vhost '/': {value_zero,0}"},
		// rule: RB-11
		{"StreamRefusesMessageTTL", map[string]any{"x-queue-type": "stream", "x-message-ttl": int32(100)},
			"invalid arg 'x-message-ttl' for queue 'q' in vhost '/' of queue type rabbit_stream_queue"},
		{"StreamMaxAge", map[string]any{"x-queue-type": "stream", "x-max-age": "7D"}, ""},
		// rule: RB-11
		{"StreamMaxAgeBadUnit", map[string]any{"x-queue-type": "stream", "x-max-age": "7W"},
			"invalid arg 'x-max-age' for queue 'q' in vhost '/': invalid_max_age"},
		{"UnknownArgumentIgnored", map[string]any{"x-custom": "anything"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantPrecondition(t, ValidateRabbitQueueArgs("/", "q", tt.args), tt.want)
		})
	}
}

func TestCheckRabbitQueueEquivalence(t *testing.T) {
	const pre = "inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': "
	tests := []struct {
		name               string
		current, requested map[string]any
		want               string
	}{
		{"SameArgs", map[string]any{"x-message-ttl": int32(1000)}, map[string]any{"x-message-ttl": int32(1000)}, ""},
		// rule: RB-11
		{"SameNumberOtherWidths", map[string]any{"x-message-ttl": int32(1000), "x-expires": int8(100)},
			map[string]any{"x-message-ttl": int64(1000), "x-expires": uint16(100)}, ""},
		// rule: RB-11
		{"DifferentValue", map[string]any{"x-message-ttl": int32(1000)}, map[string]any{"x-message-ttl": int32(2000)},
			pre + "received '2000' but current is '1000'"},
		// rule: RB-11
		{"SameNumberAsString", map[string]any{"x-message-ttl": int32(1000)}, map[string]any{"x-message-ttl": "1000"},
			pre + "received '1000' but current is '1000'"},
		// rule: RB-11
		{"SameNumberAsDouble", map[string]any{"x-message-ttl": int32(1000)}, map[string]any{"x-message-ttl": 1000.0},
			pre + "received '1.0e3' but current is '1000'"},
		// rule: RB-11
		{"ArgOmitted", map[string]any{"x-message-ttl": int32(1000)}, nil,
			pre + "received none but current is the value '1000' of type 'signedint'"},
		// rule: RB-11
		{"ArgAdded", nil, map[string]any{"x-message-ttl": int64(1000)},
			pre + "received the value '1000' of type 'long' but current is none"},
		// rule: RB-11
		{"DLXChanged", map[string]any{"x-dead-letter-exchange": "a"}, map[string]any{"x-dead-letter-exchange": "b"},
			"inequivalent arg 'x-dead-letter-exchange' for queue 'q' in vhost '/': received 'b' but current is 'a'"},
		{"DLXStringOrBytes", map[string]any{"x-dead-letter-exchange": "a"}, map[string]any{"x-dead-letter-exchange": []byte("a")}, ""},
		{"ClassicWithoutType", nil, map[string]any{"x-queue-type": "classic"}, ""},
		{"ClassicTypeOmitted", map[string]any{"x-queue-type": "classic"}, nil, ""},
		// rule: RB-11
		{"QueueTypeAdded", nil, map[string]any{"x-queue-type": "quorum"},
			"inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': received the value 'quorum' of type 'longstr' but current is none"},
		// rule: RB-11
		{"ExpiresCheckedFirst", map[string]any{"x-expires": int32(1), "x-message-ttl": int32(1)}, map[string]any{"x-expires": int32(2), "x-message-ttl": int32(2)},
			"inequivalent arg 'x-expires' for queue 'q' in vhost '/': received '2' but current is '1'"},
		{"UnknownArgsNotCompared", map[string]any{"x-custom": "a"}, map[string]any{"x-custom": "b"}, ""},
		// rule: RB-11
		{"QuorumComparesDeliveryLimit", map[string]any{"x-queue-type": "quorum", "x-delivery-limit": int32(5)},
			map[string]any{"x-queue-type": "quorum", "x-delivery-limit": int32(6)},
			"inequivalent arg 'x-delivery-limit' for queue 'q' in vhost '/': received '6' but current is '5'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantPrecondition(t, CheckRabbitQueueEquivalence("/", "q", tt.current, tt.requested), tt.want)
		})
	}
}

func TestParseRabbitExpiration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration // when wantErr is ""
		err  string
	}{
		// rule: RB-5
		{"60000", time.Minute, ""},
		// rule: RB-5
		{"+100", 100 * time.Millisecond, ""},
		// rule: RB-5
		{"007", 7 * time.Millisecond, ""},
		// rule: RB-4
		{"0", 0, ""},
		// rule: RB-5
		{"-0", 0, ""},
		// rule: RB-5
		{"4294967296", 4294967296 * time.Millisecond, ""},
		// rule: RB-5
		{"315360000000", 315360000000 * time.Millisecond, ""},
		// rule: RB-11
		{"abc", 0, "no_integer"},
		// rule: RB-11
		{" 100", 0, "no_integer"},
		// rule: RB-11
		{"", 0, "no_integer"},
		// rule: RB-11
		{"-", 0, "no_integer"},
		// rule: RB-11
		{"+-1", 0, "no_integer"},
		// rule: RB-11
		{"1.5", 0, `{leftover_string,".5"}`},
		// rule: RB-11
		{"100 ", 0, `{leftover_string," "}`},
		// rule: RB-11
		{"0x10", 0, `{leftover_string,"x10"}`},
		// rule: RB-11
		{"-1x", 0, `{leftover_string,"x"}`},
		// rule: RB-11
		{"1\"\\", 0, `{leftover_string,"\"\\"}`},
		// rule: RB-11
		{"1\x01", 0, `{leftover_string,[1]}`},
		// rule: RB-11
		{"-1", 0, "{value_negative,-1}"},
		// rule: RB-11
		{"315360000001", 0, "{value_too_large,315360000001}"},
		// rule: RB-11
		{"99999999999999999999", 0, "{value_too_large,\n" + strings.Repeat(" ", 44) + "99999999999999999999}"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRabbitExpiration(tt.in)
			if tt.err != "" {
				wantPrecondition(t, err, "invalid expiration '"+tt.in+"': "+tt.err)
				return
			}
			if err != nil {
				t.Fatalf("ParseRabbitExpiration(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(core.After(tt.want), got, cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("TTL mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRabbitQueuePolicy(t *testing.T) {
	dlx := "dlx"
	rules := func(expire string) core.RuleIDs {
		return core.RuleIDs{ItemTTL: "RB-5", DefaultTTL: "RB-1", Ceiling: "RB-5", Expire: expire, Idle: "RB-8", LockLost: "RB-6", HeadOnly: "RB-7", Limit: "RB-9"}
	}
	n := func(v int64) *int64 { return &v }
	renew := core.UseDeclare | core.UseReceive | core.UseConsume
	tests := []struct {
		name     string
		settings RabbitQueueSettings
		want     core.Policy
	}{
		// rule: RB-7
		{"NoTTLNothingExpires", RabbitQueueSettings{Type: "classic"}, core.Policy{
			HeadOnly: true, IdleUses: renew, IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
		}},
		// rule: RB-1
		{"QueueTTLIsDefaultAndCeiling", RabbitQueueSettings{Type: "classic", MessageTTL: core.After(time.Second)}, core.Policy{
			DefaultTTL: core.After(time.Second), MaxTTL: core.After(time.Second),
			HeadOnly: true, IdleUses: renew, IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
		}},
		// rule: RB-9
		{"DeadLetterExchangeDeadLetters", RabbitQueueSettings{Type: "classic", MessageTTL: core.After(0), DeadLetterExchange: &dlx}, core.Policy{
			DefaultTTL: core.After(0), MaxTTL: core.After(0), OnExpire: core.DeadLetter,
			HeadOnly: true, IdleUses: renew, IdleOnlyWithoutConsumers: true, Rules: rules("RB-9"),
		}},
		// rule: RB-8
		{"QueueTTLRenewedByDeclareGetConsume", RabbitQueueSettings{Type: "classic", Expires: core.After(600 * time.Millisecond)}, core.Policy{
			HeadOnly: true, IdleTTL: core.After(600 * time.Millisecond), IdleUses: renew, IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
		}},
		// rule: RB-8
		{"QuorumRedeclareDoesNotRenew", RabbitQueueSettings{Type: "quorum", Expires: core.After(time.Second)}, core.Policy{
			HeadOnly: true, IdleTTL: core.After(time.Second), IdleUses: core.UseReceive | core.UseConsume,
			IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
		}},
		// rule: RB-9
		{"MaxLengthDropsHead", RabbitQueueSettings{Type: "classic", MaxLength: n(3), Overflow: "drop-head"}, core.Policy{
			HeadOnly: true, IdleUses: renew, IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
			MaxItems: core.CapAt(3), Overflow: core.DropHead,
		}},
		// rule: RB-9
		{"MaxLengthZeroRejectsPublish", RabbitQueueSettings{Type: "classic", MaxLength: n(0), MaxLengthBytes: n(100), Overflow: "reject-publish"}, core.Policy{
			HeadOnly: true, IdleUses: renew, IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
			MaxItems: core.CapAt(0), MaxBytes: core.CapAt(100), Overflow: core.RejectNew,
		}},
		// rule: RB-9
		{"MaxLengthBytesRejectPublishDLX", RabbitQueueSettings{Type: "quorum", MaxLengthBytes: n(10), Overflow: "reject-publish-dlx"}, core.Policy{
			HeadOnly: true, IdleUses: core.UseReceive | core.UseConsume, IdleOnlyWithoutConsumers: true, Rules: rules("RB-3"),
			MaxBytes: core.CapAt(10), Overflow: core.RejectNewDeadLetter,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.settings.Policy()
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("Policy() mismatch (-want +got):\n%s", diff)
			}
			// rule: RB-8
			if got.IdleUses&core.UseSend != 0 {
				t.Error("publishing renews the queue TTL")
			}
		})
	}
}

func TestRabbitMessageTTL(t *testing.T) {
	queue := func(ms int32) core.Policy {
		return RabbitQueueEffective("/", "q", map[string]any{"x-message-ttl": ms}, nil, nil).Policy()
	}
	expiration := func(s string) core.TTL {
		ttl, err := ParseRabbitExpiration(s)
		if err != nil {
			t.Fatal(err)
		}
		return ttl
	}
	tests := []struct {
		name   string
		policy core.Policy
		msg    core.TTL
		want   core.TTL
	}{
		// rule: RB-5
		{"LowerQueueTTLWins", queue(300), expiration("5000"), core.After(300 * time.Millisecond)},
		// rule: RB-5
		{"LowerMessageTTLWins", queue(300), expiration("100"), core.After(100 * time.Millisecond)},
		// rule: RB-1
		{"QueueTTLAlone", queue(300), core.NoTTL, core.After(300 * time.Millisecond)},
		// rule: RB-5
		{"MessageTTLAlone", RabbitQueueSettings{Type: "classic"}.Policy(), expiration("100"), core.After(100 * time.Millisecond)},
		// rule: RB-4
		{"ZeroMessageTTL", queue(300), expiration("0"), core.After(0)},
		// rule: RB-4
		{"ZeroQueueTTL", queue(0), expiration("100"), core.After(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, effectiveTTL(tt.policy, tt.msg), cmp.AllowUnexported(core.TTL{})); diff != "" {
				t.Errorf("effective TTL mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErlangFloat(t *testing.T) {
	tests := map[float64]string{
		1.5: "1.5", 100: "100.0", 1000: "1.0e3", 1500: "1.5e3", 0.5: "0.5", 0.05: "0.05", 0.0001: "0.0001",
		0.00001: "1.0e-5", -2.5: "-2.5", 123456.789: "123456.789", 1e21: "1.0e21", 0: "0.0", 10: "10.0", 12: "12.0",
	}
	for f, want := range tests {
		if got := erlangFloat(f); got != want {
			t.Errorf("erlangFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestExpirationTextWrapsAsErlangDoes_RB11(t *testing.T) {
	// ~p breaks a term that would run past column 80 (observed on 3.10.8).
	_, err := ParseRabbitExpiration("99999999999999999999")
	want := "invalid expiration '99999999999999999999': {value_too_large,\n" + strings.Repeat(" ", 44) + "99999999999999999999}"
	if got := core.ErrorMessage(err); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	_, err = ParseRabbitExpiration("315360000001")
	if got := core.ErrorMessage(err); got != "invalid expiration '315360000001': {value_too_large,315360000001}" {
		t.Fatalf("short term wrapped: %q", got)
	}
}

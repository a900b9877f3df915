package adapters

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// RabbitPolicy is a RabbitMQ policy or operator policy (RB-10), as the
// management API and definitions.json carry it.
type RabbitPolicy struct {
	Name  string
	VHost string
	// Pattern is a regular expression matched anywhere in the entity name.
	// RabbitMQ uses PCRE; this uses Go's regexp, which lacks look-arounds and
	// back-references.
	Pattern string
	// ApplyTo is "queues", "exchanges" or "all"; "" means "all".
	ApplyTo  string
	Priority int
	// Definition is the JSON-decoded definition: values are what
	// encoding/json produces (float64 or json.Number for numbers) or Go
	// integers.
	Definition map[string]any
}

// rabbitOperatorKeys are the keys an operator policy may set.
var rabbitOperatorKeys = []string{"expires", "message-ttl", "max-length", "max-length-bytes",
	"max-in-memory-length", "max-in-memory-bytes", "delivery-limit"}

// rabbitPolicyKeys are the keys a user policy may set that RabbitMQ 3.10
// checks the values of (rabbit_policies).
var rabbitPolicyKeys = []string{"alternate-exchange", "dead-letter-exchange", "dead-letter-routing-key",
	"dead-letter-strategy", "message-ttl", "expires", "max-length", "max-length-bytes",
	"max-in-memory-length", "max-in-memory-bytes", "queue-mode", "queue-version", "overflow",
	"delivery-limit", "max-age", "stream-max-segment-size-bytes", "queue-leader-locator",
	"initial-cluster-size"}

// rabbitMirrorKeys are policy keys RabbitMQ 3.10 accepts for classic queue
// mirroring; lapse accepts them without checking their values.
var rabbitMirrorKeys = []string{"ha-mode", "ha-params", "ha-sync-mode", "ha-sync-batch-size",
	"ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator"}

// rabbitUnsupportedPolicies are, per queue type, the policy keys that make
// a policy not apply to such a queue at all (capabilities in 3.10.8).
var rabbitUnsupportedPolicies = map[string][]string{
	"classic": {"max-age", "stream-max-segment-size-bytes", "queue-leader-locator", "initial-cluster-size",
		"delivery-limit", "dead-letter-strategy"},
	"quorum": {"max-priority", "queue-mode", "single-active-consumer", "ha-mode", "ha-params", "ha-sync-mode",
		"ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator", "max-age",
		"stream-max-segment-size-bytes", "initial-cluster-size"},
	"stream": {"expires", "message-ttl", "dead-letter-exchange", "dead-letter-routing-key", "max-length",
		"max-in-memory-length", "max-in-memory-bytes", "max-priority", "overflow", "queue-mode",
		"single-active-consumer", "delivery-limit", "ha-mode", "ha-params", "ha-sync-mode",
		"ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator", "dead-letter-strategy"},
}

// jsonTerm turns a JSON-decoded value into the Erlang term RabbitMQ's JSON
// decoder makes of it: integers, floats, binaries, true/false/null atoms,
// lists and maps. A float64 with no fraction counts as an integer, since
// encoding/json cannot tell 5 from 5.0.
func jsonTerm(v any) any {
	switch x := v.(type) {
	case nil:
		return erlAtom("null")
	case bool:
		return erlAtom(strconv.FormatBool(x))
	case string:
		return erlBinary(x)
	case json.Number:
		if n, ok := new(big.Int).SetString(string(x), 10); ok {
			return n
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return big.NewInt(int64(x))
		}
		return x
	case []any:
		l := make(erlList, len(x))
		for i, e := range x {
			l[i] = jsonTerm(e)
		}
		return l
	case map[string]any:
		m := make(erlMap, len(x))
		for k, e := range x {
			m[k] = jsonTerm(e)
		}
		return m
	}
	return rabbitFieldOf(v).val // an AMQP argument: integers, []byte, ...
}

// checkRabbitPolicyValue is rabbit_policies:validate_policy0 for one key;
// it returns the error text or "".
func checkRabbitPolicyValue(key string, v any) string {
	t := jsonTerm(v)
	n, isInt := t.(*big.Int)
	b, isBin := t.(erlBinary)
	oneOf := func(allowed ...string) bool { return isBin && slices.Contains(allowed, string(b)) }
	intIn := func(min int64, max int64) bool {
		return isInt && n.Cmp(big.NewInt(min)) >= 0 && (max < 0 || n.Cmp(big.NewInt(max)) <= 0)
	}
	var ok bool
	var what string
	switch key {
	case "alternate-exchange":
		ok, what = isBin, "a valid alternate exchange name"
	case "dead-letter-exchange":
		ok, what = isBin, "a valid dead letter exchange name"
	case "dead-letter-routing-key":
		ok, what = isBin, "a valid dead letter routing key"
	case "dead-letter-strategy":
		ok, what = oneOf("at-most-once", "at-least-once"), "a valid dead letter strategy"
	case "message-ttl":
		ok, what = intIn(0, -1), "a valid message TTL"
	case "expires":
		ok, what = intIn(1, -1), "a valid queue expiry"
	case "max-length":
		ok, what = intIn(0, -1), "a valid maximum length"
	case "max-length-bytes":
		ok, what = intIn(0, -1), "a valid maximum length in bytes"
	case "max-in-memory-length", "max-in-memory-bytes":
		ok, what = intIn(0, -1), "a valid maximum memory in bytes"
	case "queue-mode":
		ok, what = oneOf("default", "lazy"), "a valid queue-mode value"
	case "queue-version":
		ok, what = intIn(1, 2), "a valid queue-version value"
	case "overflow":
		ok, what = oneOf("drop-head", "reject-publish", "reject-publish-dlx"), "a valid overflow value"
	case "delivery-limit":
		ok, what = intIn(0, -1), "a valid delivery limit"
	case "max-age":
		ok, what = isBin && checkMaxAge(rabbitField{"longstr", b}, nil) == nil, "a valid max age"
	case "queue-leader-locator":
		ok, what = oneOf("client-local", "balanced", "random", "least-leaders"), "a valid queue leader locator value"
	case "initial-cluster-size":
		ok, what = intIn(0, -1), "a valid cluster size"
	case "stream-max-segment-size-bytes":
		ok, what = intIn(0, 3_000_000_000), "a valid segment size"
	default:
		return ""
	}
	if ok {
		return ""
	}
	return erlangP(t) + " is not " + what
}

// ValidateRabbitPolicy checks a user policy as RabbitMQ 3.10's management
// API does before it stores it. The error is a *core.Error with code
// core.EINVALID whose message is the whole "reason" of the API's 400
// bad_request reply, e.g. "Validation failed\n\n-5 is not a valid message
// TTL\n" or "...\n\n0 is not a valid queue expiry\n" (RB-10). Definition
// keys are checked in sorted order (RabbitMQ walks its decoded JSON map in
// key order too); the mirroring keys (ha-*) are accepted unchecked.
func ValidateRabbitPolicy(p RabbitPolicy) error { return validateRabbitPolicy(p, false) }

// ValidateRabbitOperatorPolicy is ValidateRabbitPolicy for an operator
// policy, which may only set expires, message-ttl, max-length,
// max-length-bytes, max-in-memory-length, max-in-memory-bytes and
// delivery-limit (RB-10).
func ValidateRabbitOperatorPolicy(p RabbitPolicy) error { return validateRabbitPolicy(p, true) }

func validateRabbitPolicy(p RabbitPolicy, operator bool) error {
	var errs []string
	if msg := validateRabbitDefinition(p.Definition, operator); msg != "" {
		errs = append(errs, msg)
	}
	switch p.ApplyTo {
	case "", "all", "queues", "exchanges":
	default:
		errs = append(errs, fmt.Sprintf("apply-to '%s' unrecognised; should be 'queues', 'exchanges' or 'all'", p.ApplyTo))
	}
	if _, err := regexp.Compile(p.Pattern); err != nil {
		errs = append(errs, fmt.Sprintf("pattern should be regular expression but is invalid: %v", err))
	}
	if errs == nil {
		return nil
	}
	return core.Errorf(core.EINVALID, "Validation failed\n\n%s\n", strings.Join(errs, "\n"))
}

func validateRabbitDefinition(def map[string]any, operator bool) string {
	if len(def) == 0 {
		return "no policy provided"
	}
	var unknown erlList
	for _, k := range sortedKeys(def) {
		known := slices.Contains(rabbitOperatorKeys, k) ||
			!operator && (slices.Contains(rabbitPolicyKeys, k) || slices.Contains(rabbitMirrorKeys, k))
		if !known {
			unknown = append(unknown, erlTuple{erlBinary(k), jsonTerm(def[k])})
			continue
		}
		if msg := checkRabbitPolicyValue(k, def[k]); msg != "" {
			return msg
		}
	}
	if unknown != nil {
		return erlangP(unknown) + " are not recognised policy settings"
	}
	return ""
}

// rabbitPolicyFor returns the policy that applies to the queue: the one of
// highest priority among those of its vhost that apply to queues, match its
// name and set nothing its queue type does not support. RabbitMQ leaves a
// tie between equal priorities undefined ("chosen undeterministically"); to
// stay deterministic lapse takes the policy whose name sorts first.
func rabbitPolicyFor(vhost, queue, qtype string, policies []RabbitPolicy) *RabbitPolicy {
	var best *RabbitPolicy
	for i := range policies {
		p := &policies[i]
		if p.VHost != vhost || p.ApplyTo != "" && p.ApplyTo != "all" && p.ApplyTo != "queues" {
			continue
		}
		if slices.ContainsFunc(sortedKeys(p.Definition), func(k string) bool {
			return slices.Contains(rabbitUnsupportedPolicies[qtype], k)
		}) {
			continue
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil || !re.MatchString(queue) {
			continue
		}
		if best == nil || p.Priority > best.Priority || p.Priority == best.Priority && p.Name < best.Name {
			best = p
		}
	}
	return best
}

// RabbitQueueSettings are a queue's effective settings: its arguments with
// the policy and operator policy that apply to it (RB-10).
type RabbitQueueSettings struct {
	// Type is the queue type: "classic", "quorum" or "stream".
	Type string
	// MessageTTL is the per-queue message TTL (RB-1); unset for none.
	MessageTTL core.TTL
	// Expires is the queue TTL (RB-8); unset for none.
	Expires core.TTL
	// DeadLetterExchange and DeadLetterRoutingKey are nil when not set
	// (RB-9); "" is the default exchange.
	DeadLetterExchange   *string
	DeadLetterRoutingKey *string
	// MaxLength, MaxLengthBytes and DeliveryLimit (quorum queues only) are
	// nil when not set.
	MaxLength      *int64
	MaxLengthBytes *int64
	DeliveryLimit  *int64
	// Overflow is "drop-head" (the default), "reject-publish" or
	// "reject-publish-dlx".
	Overflow string
	// MaxPriority is a classic queue's x-max-priority (RB-14), nil when
	// not set: RabbitMQ 3.10 takes it from the argument only, never from a
	// policy.
	MaxPriority *int64
	// PolicyName and OperatorPolicyName name the policies applied, "" for
	// none (the management API's "policy" and "operator_policy").
	PolicyName         string
	OperatorPolicyName string
	// EffectiveDefinition is the policy's definition merged with the
	// operator policy's, as the management API shows it (arguments are not
	// in it); nil when neither applies.
	EffectiveDefinition map[string]any
}

// RabbitQueueEffective returns the effective settings of queue in vhost
// declared with args, under the given user policies and operator policies,
// as RabbitMQ 3.10 computes them (RB-10): only the highest-priority
// matching policy applies, and likewise for operator policies; an operator
// policy's value merges with the policy's, the lower winning; then the
// arguments: message-ttl, expires, max-length and max-length-bytes take the
// lower of policy and argument, dead-letter-exchange,
// dead-letter-routing-key and overflow take the argument. Quorum queues, as
// in 3.10, take expires and overflow from the policy when both are set.
// args must have passed ValidateRabbitQueueArgs.
func RabbitQueueEffective(vhost, queue string, args map[string]any, policies, operatorPolicies []RabbitPolicy) RabbitQueueSettings {
	qtype := rabbitQueueType(args)
	s := RabbitQueueSettings{Type: qtype, Overflow: "drop-head"}
	pol := rabbitPolicyFor(vhost, queue, qtype, policies)
	op := rabbitPolicyFor(vhost, queue, qtype, operatorPolicies)
	var def, opDef map[string]any
	if pol != nil {
		s.PolicyName, def = pol.Name, pol.Definition
	}
	if op != nil {
		s.OperatorPolicyName, opDef = op.Name, op.Definition
	}
	if pol != nil || op != nil {
		s.EffectiveDefinition = map[string]any{}
		for _, m := range []map[string]any{def, opDef} {
			for k := range m {
				s.EffectiveDefinition[k] = mergeRabbitPolicyValue(def, opDef, k)
			}
		}
	}
	// lookup is rabbit_queue_type_util:args_policy_lookup: the merged
	// policy value and the argument, resolved by argWins when both are set.
	lookup := func(key string, argWins bool) (any, bool) {
		pv, pok := s.EffectiveDefinition[key]
		av, aok := args["x-"+key]
		switch {
		case pok && aok && argWins:
			return av, true
		case pok && aok:
			return minTerm(pv, av), true
		case aok:
			return av, true
		}
		return pv, pok
	}
	policyFirst := func(key string) (any, bool) {
		if v, ok := s.EffectiveDefinition[key]; ok && qtype == "quorum" {
			return v, true
		}
		return lookup(key, false)
	}
	if qtype == "stream" {
		s.MaxLengthBytes = rabbitInt(lookup("max-length-bytes", false))
		return s
	}
	if qtype == "classic" {
		s.MaxPriority = rabbitInt(args["x-max-priority"], args["x-max-priority"] != nil)
	}
	s.MessageTTL = rabbitMillis(lookup("message-ttl", false))
	s.Expires = rabbitMillis(policyFirst("expires"))
	s.DeadLetterExchange = rabbitString(lookup("dead-letter-exchange", true))
	s.DeadLetterRoutingKey = rabbitString(lookup("dead-letter-routing-key", true))
	s.MaxLength = rabbitInt(lookup("max-length", false))
	s.MaxLengthBytes = rabbitInt(lookup("max-length-bytes", false))
	overflowKey := func() (any, bool) { return lookup("overflow", true) }
	if qtype == "quorum" {
		overflowKey = func() (any, bool) { return policyFirst("overflow") }
		s.DeliveryLimit = rabbitInt(lookup("delivery-limit", false))
	}
	if o := rabbitString(overflowKey()); o != nil {
		s.Overflow = *o
	}
	return s
}

// mergeRabbitPolicyValue is rabbit_policy's merge of a key's value in the
// policy and the operator policy: the one that is set, else the lower.
func mergeRabbitPolicyValue(def, opDef map[string]any, key string) any {
	v, ok := def[key]
	ov, ook := opDef[key]
	switch {
	case ok && ook:
		if _, isBool := jsonTerm(ov).(erlAtom); isBool {
			return ov
		}
		return minTerm(v, ov)
	case ook:
		return ov
	}
	return v
}

// minTerm returns the lower of two integer values, a policy's or an
// argument's; a value that is not an integer loses.
func minTerm(a, b any) any {
	x, xok := jsonTerm(a).(*big.Int)
	y, yok := jsonTerm(b).(*big.Int)
	if xok && (!yok || x.Cmp(y) <= 0) {
		return a
	}
	return b
}

func rabbitInt(v any, ok bool) *int64 {
	if n, isInt := jsonTerm(v).(*big.Int); ok && isInt && n.IsInt64() {
		i := n.Int64()
		return &i
	}
	return nil
}

func rabbitString(v any, ok bool) *string {
	if b, isBin := jsonTerm(v).(erlBinary); ok && isBin {
		s := string(b)
		return &s
	}
	return nil
}

// rabbitMillis reads a TTL in milliseconds; one too long for a
// time.Duration never runs out.
func rabbitMillis(v any, ok bool) core.TTL {
	n := rabbitInt(v, ok)
	switch {
	case n == nil:
		return core.NoTTL
	case *n > math.MaxInt64/int64(time.Millisecond):
		return core.Forever
	}
	return core.After(time.Duration(*n) * time.Millisecond)
}

// Policy returns the queue's core policy: the per-queue TTL as default and
// ceiling, so a message's own expiration applies when lower (RB-1, RB-5),
// counted from enqueue and kept through requeues (RB-6), expiring only at
// the head of the queue (RB-7), dead-lettered when a dead-letter exchange
// is set (RB-9) and dropped otherwise (RB-3); and the queue TTL, whose timer
// runs only while the queue has no consumer and which declare (passive
// too; not for quorum queues), basic.get and consumers renew, publishing not
// (RB-8); and the length limits, max-length and max-length-bytes with their
// overflow, kept by the engine within each enqueue (RB-9; a stream's
// max-length-bytes is its retention, not a limit).
func (s RabbitQueueSettings) Policy() core.Policy {
	p := core.Policy{
		DefaultTTL:               s.MessageTTL,
		MaxTTL:                   s.MessageTTL,
		Base:                     core.FromEnqueue,
		OnExpire:                 core.Drop,
		HeadOnly:                 true,
		IdleTTL:                  s.Expires,
		IdleUses:                 core.UseDeclare | core.UseReceive | core.UseConsume,
		IdleOnlyWithoutConsumers: true,
		Rules: core.RuleIDs{
			ItemTTL:    "RB-5",
			DefaultTTL: "RB-1",
			Ceiling:    "RB-5",
			Expire:     "RB-3",
			Idle:       "RB-8",
			LockLost:   "RB-6",
			HeadOnly:   "RB-7",
		},
	}
	if s.DeadLetterExchange != nil {
		p.OnExpire = core.DeadLetter
		p.Rules.Expire = "RB-9"
	}
	if s.Type == "quorum" {
		p.IdleUses &^= core.UseDeclare
	}
	// A priority queue delivers, expires at the head and drops for room
	// by priority first (RB-14).
	p.Priorities = s.MaxPriority != nil
	if s.Type != "stream" {
		if s.MaxLength != nil {
			p.MaxItems = core.CapAt(*s.MaxLength)
		}
		if s.MaxLengthBytes != nil {
			p.MaxBytes = core.CapAt(*s.MaxLengthBytes)
		}
		switch s.Overflow {
		case "reject-publish":
			p.Overflow = core.RejectNew
		case "reject-publish-dlx":
			p.Overflow = core.RejectNewDeadLetter
		}
		p.Rules.Limit = "RB-9"
	}
	return p
}

package adapters

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// This file checks RabbitMQ queue arguments and the per-message expiration
// exactly as RabbitMQ 3.10 does (rabbit_amqqueue:check_declare_arguments,
// rabbit_misc:assert_args_equivalence, rabbit_basic:parse_expiration), with
// its texts. Every error is a *core.Error with code core.EPRECONDITION whose
// message is RabbitMQ's reply text without the "PRECONDITION_FAILED - "
// prefix: the front-end closes the channel with 406 PRECONDITION_FAILED and
// adds the prefix (RB-11).
//
// Arguments are the decoded field table: a map from name to value, the value
// in whatever Go type the AMQP codec produced. Integers of every width are
// accepted (int8 byte, uint8 unsignedbyte, int16 short, uint16
// unsignedshort, int32 signedint, uint32 unsignedint, int and int64 long,
// and uint and uint64 read as a signed long, as RabbitMQ reads 'L'); string
// and []byte are longstr, float32 float, float64 double, bool bool, nil
// void, time.Time timestamp, map[string]any table and []any array. Where
// RabbitMQ walks a table in order and stops at the first bad entry, the keys
// are taken in sorted order.

// rabbitMaxExpiry is the longest TTL RabbitMQ accepts: 10 years of
// milliseconds (rabbit_misc:check_expiry).
const rabbitMaxExpiry = 315_360_000_000

// The queue types and the arguments each accepts (rabbit_*_queue:capabilities
// in 3.10.8), in RabbitMQ's order, which is also the order of the
// equivalence check.
var rabbitQueueTypeArgs = map[string][]string{
	"classic": {"x-expires", "x-message-ttl", "x-dead-letter-exchange", "x-dead-letter-routing-key",
		"x-max-length", "x-max-length-bytes", "x-max-priority", "x-overflow", "x-queue-mode",
		"x-queue-version", "x-single-active-consumer", "x-queue-type", "x-queue-master-locator"},
	"quorum": {"x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy",
		"x-expires", "x-max-length", "x-max-length-bytes", "x-max-in-memory-length",
		"x-max-in-memory-bytes", "x-overflow", "x-single-active-consumer", "x-queue-type",
		"x-quorum-initial-group-size", "x-delivery-limit", "x-message-ttl", "x-queue-leader-locator"},
	"stream": {"x-max-length-bytes", "x-queue-type", "x-max-age", "x-stream-max-segment-size-bytes",
		"x-initial-cluster-size", "x-queue-leader-locator"},
}

// rabbitArgCheck checks one argument; it returns nil or the Erlang error
// term RabbitMQ prints.
type rabbitArgCheck func(f rabbitField, args map[string]any) any

// rabbitDeclareArgs are rabbit_amqqueue:declare_args(), in order.
var rabbitDeclareArgs = []struct {
	key   string
	check rabbitArgCheck
}{
	{"x-expires", checkExpiresArg},
	{"x-message-ttl", checkMessageTTLArg},
	{"x-dead-letter-exchange", checkLongstr(nil, nil)},
	{"x-dead-letter-routing-key", checkDLRoutingKey},
	{"x-dead-letter-strategy", checkLongstr([]string{"at-most-once", "at-least-once"}, erlAtom("invalid_dlx_strategy"))},
	{"x-max-length", checkNonNegInt},
	{"x-max-length-bytes", checkNonNegInt},
	{"x-max-in-memory-length", checkNonNegInt},
	{"x-max-in-memory-bytes", checkNonNegInt},
	{"x-max-priority", checkMaxPriority},
	{"x-overflow", checkLongstr([]string{"drop-head", "reject-publish", "reject-publish-dlx"}, erlAtom("invalid_overflow"))},
	{"x-queue-mode", checkLongstrFmt([]string{"default", "lazy"}, "unsupported queue mode '%s'")},
	{"x-queue-version", checkQueueVersion},
	{"x-single-active-consumer", checkBool},
	{"x-queue-type", checkQueueType},
	{"x-quorum-initial-group-size", checkClusterSize},
	{"x-max-age", checkMaxAge},
	{"x-stream-max-segment-size-bytes", checkNonNegInt},
	{"x-initial-cluster-size", checkClusterSize},
	{"x-queue-leader-locator", checkLongstr([]string{"client-local", "balanced", "random", "least-leaders"}, erlAtom("invalid_queue_locator_arg"))},
}

func checkInt(f rabbitField) any {
	if !f.isInt() {
		return erlString("expected integer, got " + f.typ)
	}
	return nil
}

// checkExpiry is rabbit_misc:check_expiry.
func checkExpiry(n *big.Int) any {
	switch {
	case n.Sign() < 0:
		return erlTuple{erlAtom("value_negative"), n}
	case n.Cmp(big.NewInt(rabbitMaxExpiry)) > 0:
		return erlTuple{erlAtom("value_too_large"), n}
	}
	return nil
}

func checkNonNegInt(f rabbitField, _ map[string]any) any {
	if err := checkInt(f); err != nil {
		return err
	}
	if n := f.val.(*big.Int); n.Sign() < 0 {
		return erlTuple{erlAtom("value_negative"), n}
	}
	return nil
}

func checkExpiresArg(f rabbitField, _ map[string]any) any {
	if err := checkInt(f); err != nil {
		return err
	}
	n := f.val.(*big.Int)
	if n.Sign() == 0 {
		return erlTuple{erlAtom("value_zero"), n}
	}
	return checkExpiry(n)
}

func checkMessageTTLArg(f rabbitField, _ map[string]any) any {
	if err := checkInt(f); err != nil {
		return err
	}
	return checkExpiry(f.val.(*big.Int))
}

func checkMaxPriority(f rabbitField, args map[string]any) any {
	if err := checkNonNegInt(f, args); err != nil {
		return err
	}
	if n := f.val.(*big.Int); n.Cmp(big.NewInt(255)) > 0 {
		return erlTuple{erlAtom("max_value_exceeded"), n}
	}
	return nil
}

func checkQueueVersion(f rabbitField, args map[string]any) any {
	if err := checkNonNegInt(f, args); err != nil {
		return err
	}
	if n := f.val.(*big.Int); !n.IsInt64() || n.Int64() != 1 && n.Int64() != 2 {
		return erlString("unsupported queue version '" + n.String() + "'")
	}
	return nil
}

func checkClusterSize(f rabbitField, args map[string]any) any {
	if err := checkNonNegInt(f, args); err != nil {
		return err
	}
	if n := f.val.(*big.Int); n.Sign() == 0 {
		return erlTuple{erlAtom("value_zero"), n}
	}
	return nil
}

func unacceptable(f rabbitField) any { return erlTuple{erlAtom("unacceptable_type"), erlAtom(f.typ)} }

// checkLongstr accepts a longstr, one of allowed when that is not nil.
func checkLongstr(allowed []string, bad any) rabbitArgCheck {
	return func(f rabbitField, _ map[string]any) any {
		if f.typ != "longstr" {
			return unacceptable(f)
		}
		if allowed != nil && !slices.Contains(allowed, string(f.val.(erlBinary))) {
			return bad
		}
		return nil
	}
}

// checkLongstrFmt is checkLongstr whose error is a string naming the value.
func checkLongstrFmt(allowed []string, format string) rabbitArgCheck {
	return func(f rabbitField, _ map[string]any) any {
		if f.typ != "longstr" {
			return unacceptable(f)
		}
		if v := string(f.val.(erlBinary)); !slices.Contains(allowed, v) {
			return erlString(fmt.Sprintf(format, v))
		}
		return nil
	}
}

func checkDLRoutingKey(f rabbitField, args map[string]any) any {
	if f.typ != "longstr" {
		return unacceptable(f)
	}
	if _, ok := args["x-dead-letter-exchange"]; !ok {
		return erlAtom("routing_key_but_no_dlx_defined")
	}
	return nil
}

func checkBool(f rabbitField, _ map[string]any) any {
	if f.typ != "bool" {
		return unacceptable(f)
	}
	return nil
}

func checkQueueType(f rabbitField, args map[string]any) any {
	return checkLongstrFmt([]string{"classic", "quorum", "stream"}, "unsupported queue type '%s'")(f, args)
}

// rabbitMaxAge is rabbit_amqqueue:check_max_age's pattern: a positive
// number and one unit.
var rabbitMaxAge = regexp.MustCompile(`^([0-9]+)(Y|M|D|h|m|s)$`)

func checkMaxAge(f rabbitField, _ map[string]any) any {
	if f.typ != "longstr" {
		return unacceptable(f)
	}
	m := rabbitMaxAge.FindStringSubmatch(string(f.val.(erlBinary)))
	if m == nil {
		return erlAtom("invalid_max_age")
	}
	if n, ok := new(big.Int).SetString(m[1], 10); !ok || n.Sign() <= 0 {
		return erlAtom("invalid_max_age")
	}
	return nil
}

// rabbitQueueType returns the queue type the arguments declare: "classic"
// unless x-queue-type says otherwise.
func rabbitQueueType(args map[string]any) string {
	if f := rabbitFieldOf(args["x-queue-type"]); f.typ == "longstr" {
		if t := string(f.val.(erlBinary)); rabbitQueueTypeArgs[t] != nil {
			return t
		}
	}
	return "classic"
}

// rabbitPrecondition returns the error for a 406 PRECONDITION_FAILED close.
func rabbitPrecondition(format string, args ...any) error {
	return core.Errorf(core.EPRECONDITION, format, args...)
}

func invalidArg(vhost, queue, key string, term any) error {
	return rabbitPrecondition("invalid arg '%s' for queue '%s' in vhost '%s': %s", key, queue, vhost, erlangP(term))
}

// ValidateRabbitQueueArgs checks the arguments of a queue.declare that
// creates queue in vhost, as RabbitMQ 3.10 does, in its order: the
// dead-letter exchange's type, then x-queue-type, then each argument the
// queue type knows (x-expires, x-message-ttl, x-dead-letter-*,
// x-max-length*, x-overflow, ...), then arguments that belong to another
// queue type. The error is a *core.Error with code core.EPRECONDITION and
// RabbitMQ's text without the "PRECONDITION_FAILED - " prefix, which the
// front-end adds when it closes the channel with 406 (RB-1, RB-8, RB-11).
// A redeclare of an existing queue is not validated: RabbitMQ only checks
// it with CheckRabbitQueueEquivalence.
func ValidateRabbitQueueArgs(vhost, queue string, args map[string]any) error {
	const dlx = "x-dead-letter-exchange"
	if v, ok := args[dlx]; ok {
		if f := rabbitFieldOf(v); f.typ != "longstr" {
			return rabbitPrecondition("invalid type '%s' for arg '%s' in queue '%s' in vhost '%s'", f.typ, dlx, queue, vhost)
		}
	}
	if v, ok := args["x-queue-type"]; ok {
		if term := checkQueueType(rabbitFieldOf(v), args); term != nil {
			return invalidArg(vhost, queue, "x-queue-type", term)
		}
	}
	qtype := rabbitQueueType(args)
	known := rabbitQueueTypeArgs[qtype]
	for _, a := range rabbitDeclareArgs {
		v, ok := args[a.key]
		if !ok || !slices.Contains(known, a.key) {
			continue
		}
		if term := a.check(rabbitFieldOf(v), args); term != nil {
			return invalidArg(vhost, queue, a.key, term)
		}
	}
	for _, k := range sortedKeys(args) {
		if slices.Contains(known, k) {
			continue
		}
		for _, other := range rabbitQueueTypeArgs {
			if slices.Contains(other, k) {
				return rabbitPrecondition("invalid arg '%s' for queue '%s' in vhost '%s' of queue type rabbit_%s_queue", k, queue, vhost, qtype)
			}
		}
	}
	return nil
}

// CheckRabbitQueueEquivalence checks a queue.declare of a queue that exists
// with arguments current against the requested ones, as RabbitMQ 3.10 does
// for the arguments of the queue's type: the same number in another integer
// width (or float width) is equivalent, anything else that differs fails
// with "inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/':
// received '2000' but current is '1000'" (RB-11). A classic queue without
// x-queue-type is equivalent to one declared "classic". The error is a
// *core.Error with code core.EPRECONDITION, without the
// "PRECONDITION_FAILED - " prefix.
func CheckRabbitQueueEquivalence(vhost, queue string, current, requested map[string]any) error {
	for _, key := range rabbitQueueTypeArgs[rabbitQueueType(current)] {
		cv, cok := current[key]
		rv, rok := requested[key]
		if !cok && !rok {
			continue
		}
		if cok && rok {
			c, r := rabbitFieldOf(cv), rabbitFieldOf(rv)
			if c.class() == r.class() && termEqual(c.val, r.val) || termExact(c.val, r.val) {
				continue
			}
			return rabbitPrecondition("inequivalent arg '%s' for queue '%s' in vhost '%s': received %s but current is %s",
				key, queue, vhost, rabbitVal(r.val), rabbitVal(c.val))
		}
		if key == "x-queue-type" {
			v := cv
			if rok {
				v = rv
			}
			if f := rabbitFieldOf(v); f.typ == "longstr" && f.val == erlBinary("classic") {
				continue
			}
		}
		received, cur := "none", "none"
		if rok {
			received = rabbitTypedVal(rabbitFieldOf(rv))
		}
		if cok {
			cur = rabbitTypedVal(rabbitFieldOf(cv))
		}
		return rabbitPrecondition("inequivalent arg '%s' for queue '%s' in vhost '%s': received %s but current is %s",
			key, queue, vhost, received, cur)
	}
	return nil
}

// ParseRabbitExpiration reads a message's expiration property as RabbitMQ
// 3.10 does (rabbit_basic:parse_expiration with Erlang's string:to_integer):
// an optional sign and decimal digits, nothing after them, 0 to 315360000000
// milliseconds (RB-5). "+100" and "007" are accepted; "0" is a TTL of zero,
// which expires the message on arrival unless a consumer takes it at once
// (RB-4). Anything else is a *core.Error with code core.EPRECONDITION and
// RabbitMQ's text without the "PRECONDITION_FAILED - " prefix, for a 406
// channel close: "invalid expiration 'abc': no_integer", "invalid
// expiration '1.5': {leftover_string,".5"}", "invalid expiration '-1':
// {value_negative,-1}" (RB-11).
func ParseRabbitExpiration(expiration string) (core.TTL, error) {
	s := expiration
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	start := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	fail := func(term any) (core.TTL, error) {
		prefix := "invalid expiration '" + expiration + "': "
		return core.NoTTL, rabbitPrecondition("%s%s", prefix, erlangPAt(term, len(prefix)))
	}
	if end == start {
		return fail(erlAtom("no_integer"))
	}
	if end < len(s) {
		return fail(erlTuple{erlAtom("leftover_string"), erlString(s[end:])})
	}
	n, _ := new(big.Int).SetString(s[:end], 10)
	if term := checkExpiry(n); term != nil {
		return fail(term)
	}
	return core.After(time.Duration(n.Int64()) * time.Millisecond), nil
}

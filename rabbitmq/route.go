package rabbitmq

import (
	"reflect"
	"slices"
	"strings"
)

// This file routes messages through exchanges as RabbitMQ 3.10 does
// (rabbit_exchange:route and the exchange type modules): direct, fanout,
// topic and headers exchanges, the default exchange, exchange-to-exchange
// bindings and alternate exchanges.

// routing is one message's routing: its routing keys (the publish's, then
// its CC and BCC headers'), its headers, and where it goes.
type routing struct {
	keys    []string
	words   [][]string // keys split for topic exchanges, made on first use
	headers map[string]any
	queues  []*queue
	seen    []*exchange
	// delay is the message's x-delay in milliseconds, and held the delayed
	// exchanges that hold it (RB-15).
	delay int64
	held  []*exchange
	// Room for the common case, so that routing a message allocates nothing.
	one  [1]string
	qbuf [4]*queue
	xbuf [4]*exchange
}

// route finds the queues of a message published to exchange x of vhost v
// (nil for the default exchange). Callers hold Server.mu for reading.
func (r *routing) route(v *vhost, x *exchange) {
	if x == nil {
		for _, k := range r.keys {
			if q := v.queues[k]; q != nil && q.h.Live() {
				r.addQueue(q)
			}
		}
		return
	}
	var wbuf [4]*exchange
	work := append(wbuf[:0], x)
	if r.seen == nil {
		r.seen = r.xbuf[:0]
	}
	r.seen = append(r.seen[:0], x)
	for len(work) > 0 {
		x := work[0]
		work = work[1:]
		matched := false
		if x.delayed != "" && holds(r.delay) {
			// Held, it routes nowhere now: the plugin's exchange routes
			// to no queue, so an alternate exchange gets it too (RB-15).
			r.held = append(r.held, x)
		} else {
			r.match(x, func(b *binding) {
				matched = true
				if b.queue != nil {
					r.addQueue(b.queue)
				} else if !slices.Contains(r.seen, b.dest) {
					r.seen = append(r.seen, b.dest)
					work = append(work, b.dest)
				}
			})
		}
		if !matched {
			if name, ok := x.args["alternate-exchange"].(string); ok {
				if ae := v.exchanges[name]; ae != nil && !slices.Contains(r.seen, ae) {
					r.seen = append(r.seen, ae)
					work = append(work, ae)
				}
			}
		}
	}
}

func (r *routing) addQueue(q *queue) {
	// A queue the engine has deleted, whose Deleted hook has not unbound
	// it yet, is gone for routing too (core/handle.go).
	if q.h.Live() && !slices.Contains(r.queues, q) {
		r.queues = append(r.queues, q)
	}
}

// match calls fn for each of x's bindings the message matches, once each.
func (r *routing) match(x *exchange, fn func(*binding)) {
	switch x.routes() {
	case "direct":
		if len(r.keys) == 1 {
			for _, b := range x.byKey[r.keys[0]] {
				fn(b)
			}
			return
		}
		var done []*binding
		for _, k := range r.keys {
			for _, b := range x.byKey[k] {
				if !slices.Contains(done, b) {
					done = append(done, b)
					fn(b)
				}
			}
		}
	case "fanout":
		for _, b := range x.bindings {
			fn(b)
		}
	case "topic":
		if r.words == nil {
			for _, k := range r.keys {
				r.words = append(r.words, splitTopic(k))
			}
		}
		for _, b := range x.bindings {
			for _, w := range r.words {
				if topicMatch(b.words, w) {
					fn(b)
					break
				}
			}
		}
	case "headers":
		for _, b := range x.bindings {
			if headersMatch(b.args, r.headers) {
				fn(b)
			}
		}
	}
}

// splitTopic splits a routing key or binding pattern into its words, as
// rabbit_exchange_type_topic does: "" has no words, "a." has two.
func splitTopic(key string) []string {
	if key == "" {
		return []string{}
	}
	return strings.Split(key, ".")
}

// topicMatch reports whether pattern words match key words: "*" is exactly
// one word, "#" zero or more.
func topicMatch(pattern, key []string) bool {
	// match[j] reports whether pattern[i:] matches key[j:], for i from the
	// end backwards.
	match := make([]bool, len(key)+1)
	match[len(key)] = true
	for i := len(pattern) - 1; i >= 0; i-- {
		next := match
		match = make([]bool, len(key)+1)
		switch p := pattern[i]; p {
		case "#":
			match[len(key)] = next[len(key)]
			for j := len(key) - 1; j >= 0; j-- {
				match[j] = next[j] || match[j+1]
			}
		default:
			for j := len(key) - 1; j >= 0; j-- {
				match[j] = next[j+1] && (p == "*" || p == key[j])
			}
		}
	}
	return match[0]
}

// headersMatch is rabbit_exchange_type_headers:headers_match: with x-match
// all (the default), every binding argument not starting with "x-" must be
// in the headers with the same type class and value, a void argument
// asking only for presence; with any, one is enough. all-with-x and
// any-with-x count the x- arguments too.
func headersMatch(args, headers map[string]any) bool {
	mode, _ := args["x-match"].(string)
	any := mode == "any" || mode == "any-with-x"
	withX := strings.HasSuffix(mode, "-with-x")
	all := true
	for k, pv := range args {
		if k == "x-match" || !withX && strings.HasPrefix(k, "x-") {
			continue
		}
		dv, ok := headers[k]
		hit := ok && (pv == nil || sameHeaderValue(pv, dv))
		if any && hit {
			return true
		}
		if !hit {
			all = false
		}
	}
	return !any && all
}

// sameHeaderValue compares two table values as RabbitMQ does: the same type
// class (every integer width is one class) and equal values.
func sameHeaderValue(a, b any) bool {
	ai, aInt := toInt64(a)
	bi, bInt := toInt64(b)
	if aInt || bInt {
		return aInt && bInt && ai == bi
	}
	af, aFloat := toFloat(a)
	bf, bFloat := toFloat(b)
	if aFloat || bFloat {
		return aFloat && bFloat && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		return int64(x), true
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

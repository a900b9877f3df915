package rabbitmq

import (
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// Entity names. Everything the front-end keeps is a core entity of protocol
// core.RabbitMQ. Names are escaped so that no two objects share one: a
// vhost, queue or exchange name has its '%', '/' and ':' written as %25,
// %2F and %3A, the way the management API's URLs write the default vhost.
//
//	vhost "/"                      vhost:%2F
//	queue "orders" in "/"          %2F/orders
//	exchange "logs" in "/"         %2F/exchange/logs
//	policy "ttl" in "/"            %2F/policy/ttl
//	operator policy "cap" in "/"   %2F/operator-policy/cap
//
// A queue name is the only one with a single unescaped '/'.

var nameEscaper = strings.NewReplacer("%", "%25", "/", "%2F", ":", "%3A")

func escapeName(s string) string { return nameEscaper.Replace(s) }

// queueKey is the core entity of a queue.
func queueKey(vhost, name string) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: escapeName(vhost) + "/" + escapeName(name)}
}

// exchangeKey is the core entity of an exchange.
func exchangeKey(vhost, name string) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: escapeName(vhost) + "/exchange/" + escapeName(name)}
}

// policyKey is the core entity of a policy or operator policy.
func policyKey(vhost, name string, operator bool) core.EntityKey {
	kind := "/policy/"
	if operator {
		kind = "/operator-policy/"
	}
	return core.EntityKey{Protocol: core.RabbitMQ, Name: escapeName(vhost) + kind + escapeName(name)}
}

// vhostKey is the core entity of a vhost.
func vhostKey(vhost string) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: "vhost:" + escapeName(vhost)}
}

// The entity kinds.
const (
	kindQueue          = "queue"
	kindExchange       = "exchange"
	kindPolicy         = "policy"
	kindOperatorPolicy = "operator-policy"
	kindVhost          = "vhost"
)

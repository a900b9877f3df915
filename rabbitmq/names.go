package rabbitmq

import (
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// Entity names. Everything the front-end keeps is a core entity of protocol
// core.RabbitMQ. A queue's name is its vhost, a slash and its own name, the
// server's own vhost (Config.Vhost, "/" unless a sandbox's) written as
// nothing, so that the control API's URL of queue orders is
// /api/entities/rabbitmq//orders/items in every world. Other objects have
// a kind prefix. In the vhost part '%', '/' and ':' are written %25, %2F
// and %3A, so no two objects share a name:
//
//	queue "orders" in "/"          /orders
//	queue "orders" in "shop"       shop/orders
//	exchange "logs" in "/"         exchange:/logs
//	policy "ttl" in "/"            policy:/ttl
//	operator policy "cap" in "/"   operator-policy:/cap
//	vhost "/"                      vhost:/
//
// (A queue's vhost part has no ':', so no queue name starts like the others.)

var nameEscaper = strings.NewReplacer("%", "%25", "/", "%2F", ":", "%3A")

// vhostPart is how a vhost starts the names of what is in it.
func (s *Server) vhostPart(vhost string) string {
	if vhost == s.home() {
		return ""
	}
	return nameEscaper.Replace(vhost)
}

// queueKey is the core entity of a queue.
func (s *Server) queueKey(vhost, name string) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: s.vhostPart(vhost) + "/" + name}
}

// exchangeKey is the core entity of an exchange.
func (s *Server) exchangeKey(vhost, name string) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: "exchange:" + s.vhostPart(vhost) + "/" + name}
}

// policyKey is the core entity of a policy or operator policy.
func (s *Server) policyKey(vhost, name string, operator bool) core.EntityKey {
	kind := "policy:"
	if operator {
		kind = "operator-policy:"
	}
	return core.EntityKey{Protocol: core.RabbitMQ, Name: kind + s.vhostPart(vhost) + "/" + name}
}

// vhostKey is the core entity of a vhost.
func vhostKey(vhost string) core.EntityKey {
	return core.EntityKey{Protocol: core.RabbitMQ, Name: "vhost:" + vhost}
}

// The entity kinds.
const (
	kindQueue          = "queue"
	kindExchange       = "exchange"
	kindPolicy         = "policy"
	kindOperatorPolicy = "operator-policy"
	kindVhost          = "vhost"
)

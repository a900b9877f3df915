// Package adapters turns each protocol's settings into core rules: Service
// Bus entity properties, RabbitMQ queue arguments and policies, and Cosmos DB
// container and item TTLs become a core.Policy or a core.TTL, and bad input
// becomes a *core.Error carrying the real service's text.
//
// Everything here is a pure function of its arguments: no I/O, no clock, no
// goroutines. Each decision names its rule ID from SEMANTICS.md in
// core.Policy.Rules, so events and the dashboard can say why an item expired.
//
// One file per protocol: servicebus.go (SB-*), cosmos.go (CO-*) and
// rabbitmq.go (RB-*: queue arguments and expiration), which has two
// companions: rabbitmq_policy.go (policies, effective settings, the core
// policy) and rabbitmq_erlang.go (Erlang terms as RabbitMQ prints them in
// its texts). The protocol front-ends call them; they never call each other.
package adapters

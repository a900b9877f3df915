// Package atom is the Service Bus management plane as lapse serves it: the
// entity model the server stores (QueueProperties, TopicProperties,
// SubscriptionProperties, RuleProperties and their runtime counts), the
// ATOM XML of the management REST API (QueueDescription, TopicDescription,
// SubscriptionDescription, RuleDescription in
// http://schemas.microsoft.com/netservices/2010/10/servicebus/connect),
// the HTTP handler the administration clients of every SDK call, over a
// Backend the server implements, and the official emulator's Config.json.
//
// The wire facts come from the Go SDK (azservicebus v1.11.0, its admin
// package and internal/atom), the .NET SDK's Administration serializers
// and the service's responses recorded in those SDKs' tests (the team's
// protocol notes on Service Bus, section 3, sum them up).
//
// Decoding is namespace-aware and order-free (the Go SDK writes generated
// prefixes such as _XMLSchema-instance:type, .NET and JS i: and d2p1:);
// encoding writes what the service writes, in its element order.
// Validation of property values is the Backend's (adapters'
// ServiceBusEntity.Validate); this package refuses only what it cannot
// read.
package atom

// Package lapse is a local emulator of Azure Service Bus, RabbitMQ and Azure
// Cosmos DB built around expiry. The binary is cmd/lapse; this package holds
// only the repository-wide tests, such as the one that keeps the import
// arrows of DESIGN.md pointing inward.
package lapse

// Package lapse is a local emulator of Azure Service Bus, RabbitMQ and Azure
// Cosmos DB built around expiry. The binary is cmd/lapse, which runs the
// wiring of package server; lapsetest starts that server in-process for Go
// tests, and cmd/lapse-bench is the benchmark client. This package holds
// only the repository-wide tests, such as the one that keeps the import
// arrows of docs/architecture.md pointing inward.
package lapse

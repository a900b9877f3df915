package server

import (
	"net"

	"github.com/lapse-emulator/lapse/cosmos"
)

// Addrs returns the address each listener is bound to, by the names of
// GET /api/info: amqp, amqps, cosmos, servicebusAdmin, servicebusWebSocket,
// rabbitmqManagement and control. Run must have returned without an error.
func (m *Main) Addrs() map[string]net.Addr {
	out := map[string]net.Addr{}
	if m.Control != nil {
		out["control"] = m.Control.Addr()
	}
	if m.amqp != nil {
		out["amqp"] = m.amqp.Addr()
	}
	if m.amqps != nil {
		out["amqps"] = m.amqps.Addr()
	}
	if m.management != nil {
		out["rabbitmqManagement"] = m.management.Addr()
	}
	if m.sbAdmin != nil {
		out["servicebusAdmin"] = m.sbAdmin.Addr()
	}
	if m.sbHTTPS != nil {
		out["servicebusWebSocket"] = m.sbHTTPS.Addr()
	}
	if m.Cosmos != nil && m.Cosmos.Addr() != nil {
		out["cosmos"] = m.Cosmos.Addr()
	}
	return out
}

// CosmosKey is the Cosmos DB account key clients sign with: --cosmos-key,
// or the official emulator's well-known key.
func (m *Main) CosmosKey() string {
	if m.Config.CosmosKey != "" {
		return m.Config.CosmosKey
	}
	return cosmos.EmulatorKey
}

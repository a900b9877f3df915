package server

import (
	"context"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
)

// openCosmos starts the Cosmos DB front-end on --cosmos-addr, TLS and plain
// HTTP on one port.
func (m *Main) openCosmos(ctx context.Context) error {
	var err error
	m.Cosmos, err = cosmos.NewServer(cosmos.Config{
		Addr: m.Config.CosmosAddr, Engine: m.Engine, Now: m.Clock.Now, WallNow: m.Wall,
		Logger: m.Logger.With("listener", "cosmos"), Key: m.Config.CosmosKey,
		Certificate: m.cert, CertificatePEM: m.certPEM,
		DefaultConsistencyLevel: m.Config.CosmosConsistency, PartitionCount: m.Config.CosmosPartitionCount,
		Worlds: m.sandboxes.cosmosWorlds,
	})
	if err != nil {
		return err
	}
	m.Cosmos.SetBodyTimeout(m.Config.HTTPBodyTimeout)
	m.Engine.Register(core.Cosmos, m.Cosmos.Hooks())
	if err := m.loadCosmosConfig(ctx); err != nil {
		return err
	}
	return m.ports.serve(m.Cosmos, portCosmos)
}

// loadCosmosConfig creates what --cosmos-config declares, if given.
func (m *Main) loadCosmosConfig(ctx context.Context) error {
	if m.Config.CosmosConfig == "" {
		return nil
	}
	return loadConfigFile("cosmos-config", m.Config.CosmosConfig, false, func(b []byte) error {
		return m.Cosmos.LoadConfig(ctx, b)
	})
}

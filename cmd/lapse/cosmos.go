package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/httpserver"
)

// Files of the Cosmos DB port's certificate in the data folder.
const (
	cosmosCertFile = "cosmos-cert.pem"
	cosmosKeyFile  = "cosmos-key.pem"
)

// cosmosHosts are the names the certificate is for.
var cosmosHosts = []string{"localhost", "127.0.0.1", "::1"}

// cosmosCertificate returns the Cosmos DB port's TLS certificate and its
// PEM: the one kept in the data folder, made there on first start. With
// --data :memory: it is made anew each start.
func (m *Main) cosmosCertificate() (*tls.Certificate, []byte, error) {
	if m.Config.Data == ":memory:" {
		certPEM, keyPEM, err := httpserver.SelfSignedCert(cosmosHosts, m.Wall())
		if err != nil {
			return nil, nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		return &cert, certPEM, err
	}
	certPath := filepath.Join(m.Config.Data, cosmosCertFile)
	keyPath := filepath.Join(m.Config.Data, cosmosKeyFile)
	certPEM, err := os.ReadFile(certPath)
	if errors.Is(err, fs.ErrNotExist) {
		var keyPEM []byte
		if certPEM, keyPEM, err = httpserver.SelfSignedCert(cosmosHosts, m.Wall()); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s and %s: %w (delete both to get new ones)", certPath, keyPath, err)
	}
	return &cert, certPEM, nil
}

// openCosmos starts the Cosmos DB front-end on --cosmos-addr, TLS and plain
// HTTP on one port.
func (m *Main) openCosmos(ctx context.Context) error {
	cert, certPEM, err := m.cosmosCertificate()
	if err != nil {
		return fmt.Errorf("cosmos certificate: %w", err)
	}
	m.Cosmos, err = cosmos.NewServer(cosmos.Config{
		Addr: m.Config.CosmosAddr, Engine: m.Engine, Now: m.Clock.Now, WallNow: m.Wall,
		Logger: m.Logger.With("listener", "cosmos"), Key: m.Config.CosmosKey,
		Certificate: cert, CertificatePEM: certPEM,
	})
	if err != nil {
		return err
	}
	m.Engine.Register(core.Cosmos, m.Cosmos.Hooks())
	if err := m.loadCosmosConfig(ctx); err != nil {
		return err
	}
	return m.Cosmos.Open()
}

// queryCosmos is the dashboard's data explorer for Cosmos DB containers
// (cosmos.Server.Query). The control port opens before the Cosmos DB
// front-end exists, so it looks the front-end up at each call.
func (m *Main) queryCosmos(ctx context.Context, name, query string, max int) ([]json.RawMessage, error) {
	if m.Cosmos == nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "the Cosmos DB front-end is not running yet")
	}
	return m.Cosmos.Query(ctx, name, query, max)
}

// loadCosmosConfig creates what --cosmos-config declares, if given.
func (m *Main) loadCosmosConfig(ctx context.Context) error {
	if m.Config.CosmosConfig == "" {
		return nil
	}
	b, err := os.ReadFile(m.Config.CosmosConfig)
	if err != nil {
		return fmt.Errorf("--cosmos-config: %w", err)
	}
	if err := m.Cosmos.LoadConfig(ctx, b); err != nil {
		return fmt.Errorf("--cosmos-config %s: %w", m.Config.CosmosConfig, err)
	}
	return nil
}

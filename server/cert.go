package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/httpserver"
)

// Files of the emulator's one TLS certificate in the data folder. Data
// folders of lapse before the AMQPS port kept it as the Cosmos DB port's
// (legacyCertFiles); it is moved, so a certificate users trust stays.
const (
	certFile = "cert.pem"
	keyFile  = "key.pem"
)

var legacyCertFiles = [2]string{"cosmos-cert.pem", "cosmos-key.pem"}

// defaultCertHosts are the names every certificate of lapse is for;
// --cert-hosts adds more.
var defaultCertHosts = []string{"localhost", "127.0.0.1", "::1"}

// certHosts are the host names and addresses the certificate must cover:
// the defaults and those of --cert-hosts, without repeats.
func (c Config) certHosts() []string {
	hosts := slices.Clone(defaultCertHosts)
	for h := range strings.SplitSeq(c.CertHosts, ",") {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// certificate returns the TLS certificate every TLS listener serves (the
// Cosmos DB port, AMQPS, the Service Bus administration API) and its PEM.
// It is kept in the data folder, made there on first start, and made anew
// when --cert-hosts names a host it does not cover or it is about to
// expire. With --data :memory: it is made anew each start.
func (m *Main) certificate() (*tls.Certificate, []byte, error) {
	hosts := m.Config.certHosts()
	if m.Config.Data == ":memory:" {
		certPEM, keyPEM, err := httpserver.SelfSignedCert(hosts, m.Wall())
		if err != nil {
			return nil, nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		return &cert, certPEM, err
	}
	certPath := filepath.Join(m.Config.Data, certFile)
	keyPath := filepath.Join(m.Config.Data, keyFile)
	if err := moveLegacyCert(m.Config.Data); err != nil {
		return nil, nil, err
	}
	certPEM, err := os.ReadFile(certPath)
	var keyPEM []byte
	if err == nil {
		if keyPEM, err = os.ReadFile(keyPath); err != nil {
			return nil, nil, err
		}
		missing, expiring, bad := certLacks(certPEM, hosts, m.Wall())
		if bad != nil {
			return nil, nil, fmt.Errorf("%s: %w (delete it and %s to get new ones)", certPath, bad, keyPath)
		}
		if len(missing) > 0 || expiring {
			m.Logger.Warn("the TLS certificate is made anew: clients must trust the new one",
				"file", certPath, "missing_hosts", missing, "expiring", expiring)
			err = fs.ErrNotExist
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		if certPEM, keyPEM, err = httpserver.SelfSignedCert(hosts, m.Wall()); err != nil {
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
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s and %s: %w (delete both to get new ones)", certPath, keyPath, err)
	}
	return &cert, certPEM, nil
}

// moveLegacyCert renames the certificate files of an older data folder to
// today's names, unless today's exist.
func moveLegacyCert(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, certFile)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	oldCert, oldKey := filepath.Join(dir, legacyCertFiles[0]), filepath.Join(dir, legacyCertFiles[1])
	if _, err := os.Stat(oldCert); err != nil {
		return nil
	}
	if err := os.Rename(oldKey, filepath.Join(dir, keyFile)); err != nil {
		return err
	}
	return os.Rename(oldCert, filepath.Join(dir, certFile))
}

// certRenewBefore is how long before its end a certificate is made anew.
const certRenewBefore = 30 * 24 * time.Hour

// certLacks reads a PEM certificate and says which of hosts it does not
// cover and whether it ends within certRenewBefore of now.
func certLacks(certPEM []byte, hosts []string, now time.Time) (missing []string, expiring bool, err error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, false, errors.New("not a PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, false, err
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
				missing = append(missing, h)
			}
		} else if !slices.ContainsFunc(c.DNSNames, func(n string) bool { return strings.EqualFold(n, h) }) {
			missing = append(missing, h)
		}
	}
	return missing, now.Add(certRenewBefore).After(c.NotAfter), nil
}

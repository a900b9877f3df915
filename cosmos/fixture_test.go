package cosmos_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/httpserver"
	"github.com/lapse-emulator/lapse/internal/leakcheck"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	leakcheck.VerifyTestMain(m)
}

// t0 is when every fixture's frozen clock starts.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixture is a Cosmos DB front-end on a random port, on an engine with a
// frozen clock that tests advance, and an azcosmos client of it over plain
// HTTP.
type fixture struct {
	tb       testing.TB
	clock    *core.Clock
	e        *core.Engine
	store    *core.MemStore
	s        *cosmos.Server
	certPEM  []byte
	endpoint string
	client   *azcosmos.Client
	http     *http.Client
}

// MustServer starts a server on a new engine and store.
func MustServer(tb testing.TB) *fixture {
	tb.Helper()
	return MustServerOn(tb, core.NewMemStore(), t0)
}

// MustServerOn starts a server on store, its clock frozen at now.
func MustServerOn(tb testing.TB, store *core.MemStore, now time.Time) *fixture {
	tb.Helper()
	return mustServer(tb, store, now, "127.0.0.1")
}

// MustServerOnStore is MustServerOn on any store.
func MustServerOnStore(tb testing.TB, store core.Store, now time.Time) *fixture {
	tb.Helper()
	return mustServer(tb, store, now, "127.0.0.1")
}

// MustServerAt starts a server on a new engine and store that listens on
// host (an address of this machine, such as 127.0.0.2), with a
// certificate for host as well as localhost and 127.0.0.1.
func MustServerAt(tb testing.TB, host string) *fixture {
	tb.Helper()
	return mustServer(tb, core.NewMemStore(), t0, host)
}

// MustServerWith is MustServer with a config that set changes.
func MustServerWith(tb testing.TB, set func(*cosmos.Config)) *fixture {
	tb.Helper()
	return mustServer(tb, core.NewMemStore(), t0, "127.0.0.1", set)
}

// mustServer starts a server on store, its clock frozen at now, listening
// on host, with a config that each of sets changes.
func mustServer(tb testing.TB, store core.Store, now time.Time, host string, sets ...func(*cosmos.Config)) *fixture {
	tb.Helper()
	f := &fixture{tb: tb}
	f.store, _ = store.(*core.MemStore)
	f.clock = core.NewClock(func() time.Time { return now })
	f.clock.Freeze()
	f.e = core.NewEngine(core.Config{Store: store})
	if err := f.e.Recover(context.Background(), f.clock.Now()); err != nil {
		tb.Fatal(err)
	}
	hosts := []string{"localhost", "127.0.0.1"}
	if host != "127.0.0.1" {
		hosts = append(hosts, host)
	}
	certPEM, keyPEM, err := httpserver.SelfSignedCert(hosts, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	f.certPEM = certPEM
	cfg := cosmos.Config{Addr: net.JoinHostPort(host, "0"), Engine: f.e, Now: f.clock.Now,
		Certificate: &cert, CertificatePEM: certPEM}
	for _, set := range sets {
		set(&cfg)
	}
	f.s, err = cosmos.NewServer(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	f.e.Register(core.Cosmos, f.s.Hooks())
	if err := f.s.Open(); err != nil {
		tb.Fatal(err)
	}
	f.endpoint = "http://" + f.s.Addr().String() + "/"
	f.http = &http.Client{Transport: &http.Transport{}}
	f.client = f.newClient(cosmos.EmulatorKey)
	tb.Cleanup(func() {
		f.http.CloseIdleConnections()
		if err := f.s.Close(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return f
}

// newClient returns an azcosmos client of the server with key.
func (f *fixture) newClient(key string) *azcosmos.Client {
	f.tb.Helper()
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		f.tb.Fatal(err)
	}
	c, err := azcosmos.NewClientWithKey(f.endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: f.http},
	})
	if err != nil {
		f.tb.Fatal(err)
	}
	return c
}

// advance moves the clock by d and applies what fell due.
func (f *fixture) advance(d time.Duration) {
	f.clock.Advance(d)
	f.e.Advance(f.clock.Now())
}

// MustDatabase creates database id.
func (f *fixture) MustDatabase(id string) *azcosmos.DatabaseClient {
	f.tb.Helper()
	if _, err := f.client.CreateDatabase(context.Background(), azcosmos.DatabaseProperties{ID: id}, nil); err != nil {
		f.tb.Fatal(err)
	}
	db, err := f.client.NewDatabase(id)
	if err != nil {
		f.tb.Fatal(err)
	}
	return db
}

// MustContainer creates container id in database db with partition key
// path pk and, when defaultTTL is not nil, that defaultTtl.
func (f *fixture) MustContainer(db *azcosmos.DatabaseClient, id, pk string, defaultTTL *int32) *azcosmos.ContainerClient {
	f.tb.Helper()
	props := azcosmos.ContainerProperties{ID: id, DefaultTimeToLive: defaultTTL,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{pk}}}
	if _, err := db.CreateContainer(context.Background(), props, nil); err != nil {
		f.tb.Fatal(err)
	}
	c, err := db.NewContainer(id)
	if err != nil {
		f.tb.Fatal(err)
	}
	return c
}

// MustCreate creates item doc (marshalled to JSON) in partition pk.
func (f *fixture) MustCreate(c *azcosmos.ContainerClient, pk string, doc any) azcosmos.ItemResponse {
	f.tb.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		f.tb.Fatal(err)
	}
	resp, err := c.CreateItem(context.Background(), azcosmos.NewPartitionKeyString(pk), b, nil)
	if err != nil {
		f.tb.Fatal(err)
	}
	return resp
}

// read point-reads item id of partition pk: its document, or nil for 404.
func (f *fixture) read(c *azcosmos.ContainerClient, pk, id string) map[string]any {
	f.tb.Helper()
	resp, err := c.ReadItem(context.Background(), azcosmos.NewPartitionKeyString(pk), id, nil)
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	if err != nil {
		f.tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		f.tb.Fatal(err)
	}
	return m
}

// queryIDs runs a query in partition pk ("" for all) and returns the ids
// of the documents, reading every page.
func (f *fixture) queryIDs(c *azcosmos.ContainerClient, pk, q string, opts *azcosmos.QueryOptions) []string {
	f.tb.Helper()
	key := azcosmos.NewPartitionKey()
	if pk != "" {
		key = azcosmos.NewPartitionKeyString(pk)
	}
	pager := c.NewQueryItemsPager(q, key, opts)
	ids := []string{}
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			f.tb.Fatal(err)
		}
		for _, it := range page.Items {
			var d struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(it, &d); err != nil {
				f.tb.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// statusOf returns the HTTP status of an azcosmos error, 0 for nil and -1
// for an error without one.
func statusOf(err error) int {
	if err == nil {
		return 0
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return -1
	}
	return re.StatusCode
}

// pkOf is a string partition key.
func pkOf(s string) azcosmos.PartitionKey { return azcosmos.NewPartitionKeyString(s) }

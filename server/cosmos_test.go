package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/dashboard"
)

// MustCosmosClient returns an azcosmos client of m's Cosmos DB port over
// plain HTTP, with the emulator's key.
func MustCosmosClient(tb testing.TB, m *Main) *azcosmos.Client {
	tb.Helper()
	return mustCosmosClientAt(tb, dialable(m.Cosmos.Addr().String()))
}

// mustCosmosClientAt returns an azcosmos client of the Cosmos DB port at
// addr.
func mustCosmosClientAt(tb testing.TB, addr string) *azcosmos.Client {
	tb.Helper()
	cred, err := azcosmos.NewKeyCredential(cosmos.EmulatorKey)
	if err != nil {
		tb.Fatal(err)
	}
	tr := &http.Transport{}
	tb.Cleanup(tr.CloseIdleConnections)
	c, err := azcosmos.NewClientWithKey("http://"+addr+"/", cred,
		&azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// cosmosConfig is a --cosmos-config file.
const cosmosConfig = `{"databases": [
  {"id": "shop", "containers": [
    {"id": "carts", "partitionKey": "/userId", "defaultTtl": 3600},
    {"id": "orders", "partitionKey": {"paths": ["/tenant", "/userId"], "kind": "MultiHash", "version": 2}, "throughput": 1000}
  ]},
  {"id": "shared", "autoscaleMaxThroughput": 4000, "containers": [{"id": "c", "partitionKey": "/pk"}]}
]}`

// rule: CO-4, CO-6. --cosmos-config declares databases and containers; a
// container's defaultTtl expires items when the control API moves the
// clock, the events say why, and a reset brings the configured containers
// back. The TLS certificate is made in the data folder and kept.
func TestCosmosConfigClockAndReset_CO4(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cosmos.json")
	if err := os.WriteFile(cfg, []byte(cosmosConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	m := MustStart(t, "--data", data, "--cosmos-config", cfg, "--clock", "frozen")
	ctx := context.Background()
	client := MustCosmosClient(t, m)
	carts, _ := client.NewContainer("shop", "carts")
	props, err := carts.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ttl := props.ContainerProperties.DefaultTimeToLive; ttl == nil || *ttl != 3600 {
		t.Fatalf("carts defaultTtl %v", ttl)
	}
	orders, _ := client.NewContainer("shop", "orders")
	tp, err := orders.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := tp.ThroughputProperties.ManualThroughput(); n != 1000 {
		t.Fatalf("orders throughput %d", n)
	}
	shared, _ := client.NewDatabase("shared")
	dtp, err := shared.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := dtp.ThroughputProperties.AutoscaleMaxThroughput(); n != 4000 {
		t.Fatalf("shared autoscale %d", n)
	}

	if _, err := carts.CreateItem(ctx, azcosmos.NewPartitionKeyString("u1"), []byte(`{"id":"cart","userId":"u1"}`), nil); err != nil {
		t.Fatal(err)
	}
	a := MustAPI(t, m)
	if got := a.post("/api/clock/advance", `{"by":"PT1H"}`, nil); got != http.StatusOK {
		t.Fatalf("advance: %d", got)
	}
	if _, err := carts.ReadItem(ctx, azcosmos.NewPartitionKeyString("u1"), "cart", nil); err == nil {
		t.Fatal("the cart outlived the container's defaultTtl of an hour")
	}
	var events []core.Event
	a.get("/api/events?protocol=cosmos", &events)
	if len(events) != 1 || events[0].Entity != "shop/carts" || events[0].Rule != "CO-6" || events[0].Action != core.ActionExpired ||
		events[0].Reason != "TTL ran out (entity default TTL 1h)" {
		t.Fatalf("events: %+v", events)
	}

	// A reset drops everything, and the configuration comes back.
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "scratch"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.post("/api/reset", "", nil); got != http.StatusOK {
		t.Fatalf("reset: %d", got)
	}
	scratch, _ := client.NewDatabase("scratch")
	if _, err := scratch.Read(ctx, nil); err == nil {
		t.Fatal("a database survived the reset")
	}
	if _, err := carts.Read(ctx, nil); err != nil {
		t.Fatalf("carts after reset: %v", err)
	}

	// The certificate is in the data folder and the same after a restart.
	cert, err := os.ReadFile(filepath.Join(data, certFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m2 := MustStart(t, "--data", data)
	r, err := http.Get("http://" + dialable(m2.Cosmos.Addr().String()) + "/_explorer/emulator.pem")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var served bytes.Buffer
	served.ReadFrom(r.Body)
	if !bytes.Equal(served.Bytes(), cert) {
		t.Fatal("the certificate changed across a restart")
	}
	var info dashboard.Info
	MustAPI(t, m2).get("/api/info", &info)
	if l := info.Listeners["cosmos"]; !l.Served {
		t.Fatalf("/api/info cosmos: %+v", l)
	}
}

// issue 26.7: lapse started with --cosmos-consistency Strong, as the SDKs'
// CI starts the official emulator, serves a read at Strong; started with
// the default, Session, it refuses one with the service's 400.
func TestIssue26_7_CosmosConsistencyFlagReachesTheAccount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args   []string
		status int
	}{
		{nil, http.StatusBadRequest},
		{[]string{"--cosmos-consistency", "Strong", "--cosmos-partition-count", "50"}, 0},
	} {
		m := MustStart(t, tc.args...)
		c := MustCosmosClient(t, m)
		if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
			t.Fatal(err)
		}
		db, _ := c.NewDatabase("db")
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c",
			PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
			t.Fatal(err)
		}
		ct, _ := db.NewContainer("c")
		pk := azcosmos.NewPartitionKeyString("p")
		if _, err := ct.CreateItem(ctx, pk, []byte(`{"id":"a","pk":"p"}`), nil); err != nil {
			t.Fatal(err)
		}
		_, err := ct.ReadItem(ctx, pk, "a", &azcosmos.ItemOptions{ConsistencyLevel: azcosmos.ConsistencyLevelStrong.ToPtr()})
		status := 0 // served
		if err != nil {
			var re *azcore.ResponseError
			if !errors.As(err, &re) {
				t.Fatal(err)
			}
			status = re.StatusCode
		}
		if status != tc.status {
			t.Errorf("%v: a read at Strong: %v, want status %d", tc.args, err, tc.status)
		}
	}
}

package lapsetest_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/lapse-emulator/lapse/lapsetest"
)

// issue 29.3 (Go). Parallel tests share ONE lapse, each in a sandbox of
// its own: every one makes the same database and container, with the
// same default TTL, and moves its clock by its own amount. Without
// sandboxes the second CreateDatabase would be a 409 and each clock move
// would expire the others' items.
func TestSandbox_ParallelTestsShareOneLapse(t *testing.T) {
	srv := lapsetest.New(t)
	for i, by := range []time.Duration{30 * time.Second, 90 * time.Second, 59 * time.Second, 10 * time.Minute} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			sb := lapsetest.NewSandbox(t, lapsetest.At(srv.ControlURL()))
			cred, err := azcosmos.NewKeyCredential(sb.CosmosKey())
			if err != nil {
				t.Fatal(err)
			}
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			client, err := azcosmos.NewClientWithKey(sb.CosmosEndpoint(), cred,
				&azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
			if err != nil {
				t.Fatal(err)
			}
			c := ctx(t)
			if _, err := client.CreateDatabase(c, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
				t.Fatal(err)
			}
			db, _ := client.NewDatabase("shop")
			ttl := int32(60)
			if _, err := db.CreateContainer(c, azcosmos.ContainerProperties{ID: "carts", DefaultTimeToLive: &ttl,
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}}}, nil); err != nil {
				t.Fatal(err)
			}
			carts, _ := db.NewContainer("carts")
			pk := azcosmos.NewPartitionKeyString("ann")
			if _, err := carts.CreateItem(c, pk, []byte(`{"id":"cart","user":"ann"}`), nil); err != nil {
				t.Fatal(err)
			}
			before := sb.Now()
			sb.Advance(by)
			if got := sb.Now().Sub(before); got != by {
				t.Fatalf("the sandbox's clock moved %v, want %v: another test moved it", got, by)
			}
			_, err = carts.ReadItem(c, pk, "cart", nil)
			expired := by >= time.Minute
			if gone := err != nil; gone != expired {
				t.Fatalf("after %v: item gone %v (err %v), want %v", by, gone, err, expired)
			}
			var rules []string
			for _, ev := range sb.Events() {
				rules = append(rules, ev.Rule+" "+ev.Entity+" "+ev.ItemKey)
			}
			if want := map[bool]int{true: 1, false: 0}[expired]; len(rules) != want {
				t.Fatalf("the sandbox's events %v, want %d", rules, want)
			}
		})
	}
}

// issue 29.3 (Go). With no lapse at the URL, the error says what was
// tried and what to do.
func TestSandbox_NoLapseSaysSo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = lapsetest.StartSandbox(lapsetest.At("http://" + addr))
	if err == nil || !strings.Contains(err.Error(), "no lapse answers at http://"+addr) || !strings.Contains(err.Error(), "LAPSE_URL") {
		t.Fatalf("error %v", err)
	}
}

package cosmos_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/lapse-emulator/lapse/core/storetest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// Issue 25.5: a database or container whose create fails to be stored is
// not left behind: once the store takes writes again, the same create
// succeeds (201) instead of finding a 409 Conflict for something the
// client was told failed.
func TestFailedCreateLeavesNoOrphan(t *testing.T) {
	st := storetest.NewFailing()
	f := MustServerOnStore(t, st, t0)
	ctx := context.Background()
	// No retries: a failed commit is a 500, which the SDK would retry for
	// seconds.
	cred, err := azcosmos.NewKeyCredential(cosmos.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(f.endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: f.http, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	f.client = client
	if _, err := f.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, err := client.NewDatabase("shop")
	if err != nil {
		t.Fatal(err)
	}
	creates := []struct {
		what string
		do   func() error
	}{
		{"database", func() error {
			_, err := f.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "other"}, nil)
			return err
		}},
		{"container", func() error {
			_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "carts",
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/id"}}}, nil)
			return err
		}},
	}
	st.Fail(true)
	for _, c := range creates {
		if err := c.do(); err == nil {
			t.Errorf("the %s was created on a store that fails", c.what)
		}
	}
	st.Fail(false)
	for _, c := range creates {
		if err := c.do(); err != nil {
			t.Errorf("the %s, once the store takes writes: %v", c.what, err)
		}
	}
}

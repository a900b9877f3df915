package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// emulatorKey is the Cosmos DB emulator's well-known account key, which
// lapse takes by default.
const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// cosmosDB creates and reads items of the container shop/carts.
type cosmosDB struct {
	carts *azcosmos.ContainerClient
}

func newCosmos(endpoint string, tlsConfig *tls.Config) (*cosmosDB, error) {
	cred, err := azcosmos.NewKeyCredential(emulatorKey)
	if err != nil {
		return nil, fmt.Errorf("cosmos db: %w", err)
	}
	client, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Transport: &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cosmos db: %w", err)
	}
	carts, err := client.NewContainer("shop", "carts")
	if err != nil {
		return nil, fmt.Errorf("cosmos db: %w", err)
	}
	return &cosmosDB{carts: carts}, nil
}

// create creates the item id, in the partition of the user id, without a
// ttl of its own: the container's defaultTtl applies.
func (c *cosmosDB) create(ctx context.Context, id string) error {
	item := []byte(`{"id":"` + id + `","userId":"` + id + `","items":["book"]}`)
	if _, err := c.carts.CreateItem(ctx, azcosmos.NewPartitionKeyString(id), item, nil); err != nil {
		return fmt.Errorf("cosmos db: create: %w", err)
	}
	return nil
}

// gone checks that reading the item id answers 404 Not Found.
func (c *cosmosDB) gone(ctx context.Context, id string) error {
	_, err := c.carts.ReadItem(ctx, azcosmos.NewPartitionKeyString(id), id, nil)
	var re *azcore.ResponseError
	switch {
	case err == nil:
		return fmt.Errorf("cosmos db: item %s is still there", id)
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		return nil
	default:
		return fmt.Errorf("cosmos db: read: %w", err)
	}
}

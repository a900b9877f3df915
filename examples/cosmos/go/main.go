// Command cosmos is the Cosmos DB example of lapse's README, with the
// official Go SDK: it writes an item to the container "carts" of the
// database "shop" (declared by examples/config/cosmos.json: partition key
// /userId, defaultTtl 3600 seconds), reads it, moves lapse's clock 61
// minutes and reads it again: 404, it expired.
//
//	go run ./examples/cosmos/go
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// key is the official Cosmos DB emulator's well-known key, which lapse
// takes too.
const key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

func main() {
	endpoint := env("COSMOS_ENDPOINT", "http://localhost:8081/")
	control := env("LAPSE_CONTROL_URL", "http://localhost:8080")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cred, err := azcosmos.NewKeyCredential(key)
	check(err)
	client, err := azcosmos.NewClientWithKey(endpoint, cred, nil)
	check(err)
	carts, err := client.NewContainer("shop", "carts")
	check(err)
	pk := azcosmos.NewPartitionKeyString("u1")
	_, err = carts.UpsertItem(ctx, pk, []byte(`{"id":"cart1","userId":"u1","items":["book"]}`), nil)
	check(err)
	_, err = carts.ReadItem(ctx, pk, "cart1", nil)
	check(err)
	fmt.Println("read cart1: found")

	// The control API moves lapse's clock; it answers once every expiry
	// due by then is applied.
	resp, err := http.Post(control+"/api/clock/advance", "application/json", strings.NewReader(`{"by":"61m"}`))
	check(err)
	resp.Body.Close()
	fmt.Println("clock advanced 61m")

	_, err = carts.ReadItem(ctx, pk, "cart1", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		log.Fatalf("read cart1 after 61m: %v, want a 404", err)
	}
	fmt.Printf("read cart1: %d %s\n", re.StatusCode, http.StatusText(re.StatusCode))
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Command books is lapse's own program of the flow of Microsoft's Go
// quickstart for Azure Cosmos DB for NoSQL, with azcosmos and the account
// key: through $COSMOS_ENDPOINT and $COSMOS_KEY it creates the database
// library and its container books (partition key /shelf, 400 RU/s),
// taking a 409 for "already there", then creates, reads and deletes one
// item at session consistency.
//
// cosmos/quickstart_test.go runs it; docs/examples.md names the
// quickstart.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// book is the item the program writes and reads back.
type book struct {
	ID    string `json:"id"`
	Shelf string `json:"shelf"`
	Title string `json:"title"`
	Year  int    `json:"year"`
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cred, err := azcosmos.NewKeyCredential(os.Getenv("COSMOS_KEY"))
	check(err)
	client, err := azcosmos.NewClientWithKey(os.Getenv("COSMOS_ENDPOINT"), cred, nil)
	check(err)

	_, err = client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "library"}, nil)
	fmt.Println("database library:", outcome(err))

	db, err := client.NewDatabase("library")
	check(err)
	throughput := azcosmos.NewManualThroughputProperties(400)
	_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "books",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/shelf"}},
	}, &azcosmos.CreateContainerOptions{ThroughputProperties: &throughput})
	fmt.Println("container books:", outcome(err))

	books, err := client.NewContainer("library", "books")
	check(err)
	b := book{ID: "b1", Shelf: "poetry", Title: "Leaves of Grass", Year: 1855}
	pk := azcosmos.NewPartitionKeyString(b.Shelf)
	doc, err := json.Marshal(b)
	check(err)
	session := &azcosmos.ItemOptions{ConsistencyLevel: azcosmos.ConsistencyLevelSession.ToPtr()}
	created, err := books.CreateItem(ctx, pk, doc, session)
	check(err)
	fmt.Printf("created %s: %d\n", b.ID, created.RawResponse.StatusCode)

	read, err := books.ReadItem(ctx, pk, b.ID, nil)
	check(err)
	var got book
	check(json.Unmarshal(read.Value, &got))
	fmt.Printf("read %s: %d, %q (%d) on shelf %s\n", got.ID, read.RawResponse.StatusCode, got.Title, got.Year, got.Shelf)

	deleted, err := books.DeleteItem(ctx, pk, b.ID, nil)
	check(err)
	fmt.Printf("deleted %s: %d\n", b.ID, deleted.RawResponse.StatusCode)
}

// outcome says what a create's error means: nothing is "created", a 409
// "already there"; any other error ends the program.
func outcome(err error) string {
	var resp *azcore.ResponseError
	switch {
	case err == nil:
		return "created"
	case errors.As(err, &resp) && resp.StatusCode == http.StatusConflict:
		return "already there"
	}
	log.Fatal(err)
	return ""
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

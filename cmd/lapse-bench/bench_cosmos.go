package main

// The Cosmos DB scenarios of lapse-bench, with the official azcosmos SDK
// as the client: point creates, reads and upserts, and queries by id and
// by partition key, against lapse's Cosmos DB front-end or any emulator of
// the REST API. Each run makes a database and container of its own and
// deletes them afterwards.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

const (
	// benchCosmosItemSize is the size of an item's JSON as sent.
	benchCosmosItemSize = 1024
	// benchCosmosPartitions is how many partition key values the items
	// spread over, item i in partition i % benchCosmosPartitions.
	benchCosmosPartitions = 100
	// benchCosmosLoaders is how many workers create the items of the
	// scenarios that read them, before the timing starts.
	benchCosmosLoaders = 8
	// cosmos-query-pk runs --items / benchCosmosQueryShare queries, each
	// reading a whole partition.
	benchCosmosQueryShare = 10
)

// Queries of the scenarios.
const (
	benchCosmosQueryID = "SELECT * FROM c WHERE c.id = @id"
	benchCosmosQueryPK = "SELECT * FROM c WHERE c.pk = @pk"
)

// benchCosmosCreate is cosmos-create: c.Items point creates (CreateItem)
// into a new container from c.Workers workers.
func benchCosmosCreate(ctx context.Context, c benchConfig) (benchResult, error) {
	return withCosmosSession(ctx, c, "cosmos-create", func(s *cosmosSession) (benchResult, error) {
		took, err := s.each(c.Items, c.Workers, func(ctx context.Context, i int) error {
			_, err := s.ct.CreateItem(ctx, s.pk(i), s.docs[i], nil)
			return err
		})
		if err != nil {
			return benchResult{}, fmt.Errorf("CreateItem: %w", err)
		}
		return s.rate(c.Items, took, "CreateItem"), nil
	})
}

// benchCosmosRead is cosmos-read: c.Items items created first (not
// timed), then each read once (ReadItem) in a random order.
func benchCosmosRead(ctx context.Context, c benchConfig) (benchResult, error) {
	return withCosmosSession(ctx, c, "cosmos-read", func(s *cosmosSession) (benchResult, error) {
		if err := s.load(); err != nil {
			return benchResult{}, err
		}
		order := rand.Perm(c.Items)
		took, err := s.each(c.Items, c.Workers, func(ctx context.Context, i int) error {
			i = order[i]
			resp, err := s.ct.ReadItem(ctx, s.pk(i), s.id(i), nil)
			if err == nil && len(resp.Value) == 0 {
				err = fmt.Errorf("%s: an empty body", s.id(i))
			}
			return err
		})
		if err != nil {
			return benchResult{}, fmt.Errorf("ReadItem: %w", err)
		}
		return s.rate(c.Items, took, "ReadItem in a random order"), nil
	})
}

// benchCosmosQueryByID is cosmos-query-id: c.Items items created first
// (not timed), then each found once, in a random order, by
// benchCosmosQueryID in its partition; each query must return one item.
func benchCosmosQueryByID(ctx context.Context, c benchConfig) (benchResult, error) {
	return withCosmosSession(ctx, c, "cosmos-query-id", func(s *cosmosSession) (benchResult, error) {
		if err := s.load(); err != nil {
			return benchResult{}, err
		}
		order := rand.Perm(c.Items)
		took, err := s.each(c.Items, c.Workers, func(ctx context.Context, i int) error {
			i = order[i]
			n, _, err := s.query(ctx, benchCosmosQueryID, i, "@id", s.id(i))
			if err == nil && n != 1 {
				err = fmt.Errorf("%s: %d items, want 1", s.id(i), n)
			}
			return err
		})
		if err != nil {
			return benchResult{}, fmt.Errorf("query: %w", err)
		}
		return s.rate(c.Items, took, fmt.Sprintf("%q with the partition key", benchCosmosQueryID)), nil
	})
}

// benchCosmosQueryByPK is cosmos-query-pk: c.Items items created first
// (not timed), then a tenth as many queries benchCosmosQueryPK, each
// reading every page of one partition (about c.Items /
// benchCosmosPartitions items), the partitions in turn.
func benchCosmosQueryByPK(ctx context.Context, c benchConfig) (benchResult, error) {
	return withCosmosSession(ctx, c, "cosmos-query-pk", func(s *cosmosSession) (benchResult, error) {
		if err := s.load(); err != nil {
			return benchResult{}, err
		}
		want := make([]int, s.partitions)
		for i := range c.Items {
			want[i%s.partitions]++
		}
		queries := max(1, c.Items/benchCosmosQueryShare)
		var pages atomic.Int64
		took, err := s.each(queries, c.Workers, func(ctx context.Context, i int) error {
			p := i % s.partitions
			n, np, err := s.query(ctx, benchCosmosQueryPK, p, "@pk", benchCosmosPK(p))
			pages.Add(int64(np))
			if err == nil && n != want[p] {
				err = fmt.Errorf("partition %s: %d items, want %d", benchCosmosPK(p), n, want[p])
			}
			return err
		})
		if err != nil {
			return benchResult{}, fmt.Errorf("query: %w", err)
		}
		return s.rate(queries, took, fmt.Sprintf("%q with the partition key, about %d items each, %.1f pages each",
			benchCosmosQueryPK, c.Items/s.partitions, float64(pages.Load())/float64(queries))), nil
	})
}

// benchCosmosUpsert is cosmos-upsert: c.Items items created first (not
// timed), then each upserted (UpsertItem) once with a new revision, in a
// random order: a replace of an existing item.
func benchCosmosUpsert(ctx context.Context, c benchConfig) (benchResult, error) {
	return benchCosmosRewrite(ctx, c, "cosmos-upsert", "UpsertItem", func(ctx context.Context, s *cosmosSession, i int, doc []byte) error {
		_, err := s.ct.UpsertItem(ctx, s.pk(i), doc, nil)
		return err
	})
}

// benchCosmosReplace is cosmos-replace: c.Items items created first (not
// timed), then each replaced (ReplaceItem) once with a new revision, in a
// random order.
func benchCosmosReplace(ctx context.Context, c benchConfig) (benchResult, error) {
	return benchCosmosRewrite(ctx, c, "cosmos-replace", "ReplaceItem", func(ctx context.Context, s *cosmosSession, i int, doc []byte) error {
		_, err := s.ct.ReplaceItem(ctx, s.pk(i), s.id(i), doc, nil)
		return err
	})
}

// benchCosmosRewrite creates c.Items items (not timed), then writes each
// once more with a new revision through write (the SDK call named call),
// in a random order.
func benchCosmosRewrite(ctx context.Context, c benchConfig, scenario, call string, write func(ctx context.Context, s *cosmosSession, i int, doc []byte) error) (benchResult, error) {
	return withCosmosSession(ctx, c, scenario, func(s *cosmosSession) (benchResult, error) {
		if err := s.load(); err != nil {
			return benchResult{}, err
		}
		next := make([][]byte, c.Items)
		for i := range next {
			next[i] = benchCosmosItem(s.id(i), i, s.partitions, 1)
		}
		order := rand.Perm(c.Items)
		took, err := s.each(c.Items, c.Workers, func(ctx context.Context, i int) error {
			return write(ctx, s, order[i], next[order[i]])
		})
		if err != nil {
			return benchResult{}, fmt.Errorf("%s: %w", call, err)
		}
		return s.rate(c.Items, took, call+" of existing items in a random order"), nil
	})
}

// cosmosSession is one run of a Cosmos DB scenario: a client, the
// database and container it made, and the items it writes.
type cosmosSession struct {
	c          benchConfig
	ctx        context.Context
	client     *azcosmos.Client
	tr         *http.Transport
	dbID       string
	db         *azcosmos.DatabaseClient // nil until made
	ct         *azcosmos.ContainerClient
	partitions int
	docs       [][]byte
	// cpu is the CPU time used in the last each, from and to.
	cpu [2]cpuUse
}

// withCosmosSession runs f with a new database lapse-bench-<scenario>-<id>
// holding a container "items" partitioned on /pk, and deletes the database
// however f ends.
func withCosmosSession(ctx context.Context, c benchConfig, scenario string, f func(*cosmosSession) (benchResult, error)) (benchResult, error) {
	client, tr, err := newBenchCosmosClient(c)
	if err != nil {
		return benchResult{}, err
	}
	defer tr.CloseIdleConnections()
	s := &cosmosSession{c: c, ctx: ctx, client: client, tr: tr, dbID: fmt.Sprintf("lapse-bench-%s-%08x", scenario, rand.Uint32()),
		partitions: min(benchCosmosPartitions, c.Items)}
	s.docs = make([][]byte, c.Items)
	for i := range s.docs {
		s.docs[i] = benchCosmosItem(s.id(i), i, s.partitions, 0)
	}
	var r benchResult
	err = s.open()
	if err == nil {
		r, err = f(s)
	}
	if s.db != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), benchStall)
		defer cancel()
		if _, derr := s.db.Delete(dctx, nil); derr != nil {
			err = errors.Join(err, fmt.Errorf("deleting database %s: %w", s.dbID, derr))
		}
	}
	return r, err
}

// open makes the session's database and container.
func (s *cosmosSession) open() error {
	if _, err := s.client.CreateDatabase(s.ctx, azcosmos.DatabaseProperties{ID: s.dbID}, nil); err != nil {
		return fmt.Errorf("creating database %s: %w", s.dbID, err)
	}
	db, err := s.client.NewDatabase(s.dbID)
	if err != nil {
		return err
	}
	s.db = db
	props := azcosmos.ContainerProperties{ID: "items", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(s.ctx, props, nil); err != nil {
		return fmt.Errorf("creating container items: %w", err)
	}
	s.ct, err = db.NewContainer("items")
	return err
}

// id is item i's id.
func (s *cosmosSession) id(i int) string { return fmt.Sprintf("item-%07d", i) }

// pk is item i's partition key.
func (s *cosmosSession) pk(i int) azcosmos.PartitionKey {
	return azcosmos.NewPartitionKeyString(benchCosmosPK(i % s.partitions))
}

// load creates every item from benchCosmosLoaders workers.
func (s *cosmosSession) load() error {
	_, err := s.each(len(s.docs), benchCosmosLoaders, func(ctx context.Context, i int) error {
		_, err := s.ct.CreateItem(ctx, s.pk(i), s.docs[i], nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("creating the items: %w", err)
	}
	return nil
}

// query runs text with one parameter in the partition of item (or
// partition) i, reads every page, and returns how many items and pages it
// read.
func (s *cosmosSession) query(ctx context.Context, text string, i int, name string, value any) (items, pages int, err error) {
	pager := s.ct.NewQueryItemsPager(text, s.pk(i), &azcosmos.QueryOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: name, Value: value}},
	})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return items, pages, err
		}
		items += len(page.Items)
		pages++
	}
	return items, pages, nil
}

// each calls op for 0 <= i < n from workers goroutines, each taking the
// next i, and returns the time from the start until the last returned. The
// first error ends it, as does no op returning for benchStall.
func (s *cosmosSession) each(n, workers int, op func(ctx context.Context, i int) error) (time.Duration, error) {
	w := newBenchWatch(s.ctx, "answer")
	defer w.stop()
	var next atomic.Int64
	var wg sync.WaitGroup
	s.cpu[0] = readCPU(s.c.ServerPID)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for w.ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := op(w.ctx, i); err != nil {
					w.fail(err)
					return
				}
				w.step()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	s.cpu[1] = readCPU(s.c.ServerPID)
	return took, w.err()
}

// rate is the result of n operations that took d.
func (s *cosmosSession) rate(n int, d time.Duration, what string) benchResult {
	r := benchRate(n, d, fmt.Sprintf("%s, %d worker%s, %d items of %d B in %d partitions",
		what, s.c.Workers, plural(s.c.Workers), s.c.Items, benchCosmosItemSize, s.partitions))
	r.Unit = "ops/s"
	r.cpuPerOp(s.cpu[0], s.cpu[1], n)
	return r
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// benchCosmosPK is the partition key value of partition p.
func benchCosmosPK(p int) string { return fmt.Sprintf("pk-%03d", p) }

// benchCosmosItem is the JSON of item i with id, its partition key among
// partitions and revision rev: benchCosmosItemSize bytes, padded with a
// filler field.
func benchCosmosItem(id string, i, partitions, rev int) []byte {
	doc := struct {
		ID     string   `json:"id"`
		PK     string   `json:"pk"`
		N      int      `json:"n"`
		Rev    int      `json:"rev"`
		Name   string   `json:"name"`
		Tags   []string `json:"tags"`
		Filler string   `json:"filler"`
	}{ID: id, PK: benchCosmosPK(i % partitions), N: i, Rev: rev, Name: "bench item " + id, Tags: []string{"lapse", "bench", "cosmos"}}
	b, _ := json.Marshal(doc)
	if pad := benchCosmosItemSize - len(b); pad > 0 {
		doc.Filler = strings.Repeat("lorem ipsum ", pad/12+1)[:pad]
		b, _ = json.Marshal(doc)
	}
	return b
}

// newBenchCosmosClient returns an azcosmos client of --cosmos-url with
// --cosmos-key, with connections for every worker and no retries (an
// error is a result). Its transport is closed by the caller.
func newBenchCosmosClient(c benchConfig) (*azcosmos.Client, *http.Transport, error) {
	cred, err := azcosmos.NewKeyCredential(c.CosmosKey)
	if err != nil {
		return nil, nil, &usageError{fmt.Sprintf("--cosmos-key: %v", err)}
	}
	tr := &http.Transport{
		MaxIdleConnsPerHost: max(c.Workers, benchCosmosLoaders),
		// Emulators serve self-signed certificates: a bench of one on this
		// machine does not check it.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	client, err := azcosmos.NewClientWithKey(c.CosmosURL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, nil, err
	}
	return client, tr, nil
}

// checkCosmosURL checks --cosmos-url: http or https with a host.
func checkCosmosURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return &usageError{fmt.Sprintf("--cosmos-url %q: use http://HOST:PORT/ or https://HOST:PORT/", s)}
	}
	return nil
}

// benchCosmosPreflight reads a database that does not exist: a 404 says
// the account answers and takes the key. (The SDK reads the account first
// and reports its failures as text, so a wrong key is not told apart.)
func benchCosmosPreflight(ctx context.Context, c benchConfig) error {
	client, tr, err := newBenchCosmosClient(c)
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	db, err := client.NewDatabase("lapse-bench-preflight")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = db.Read(ctx, nil)
	var re *azcore.ResponseError
	if err == nil || errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return nil
	}
	return fmt.Errorf("connecting to --cosmos-url with --cosmos-key: %w", err)
}

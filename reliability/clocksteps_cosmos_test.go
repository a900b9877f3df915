//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

const (
	// clockCODefaultTTL is the container's defaultTtl in seconds (CO-4).
	clockCODefaultTTL = 240
	// clockCOMax caps the items written (see clockRabbitMax).
	clockCOMax = 2000
	// clockCOParts is how many partition key values the items spread over.
	clockCOParts = 4
)

// clockCosmos is the Cosmos DB load: one writer creating items, one
// reader reading recent ones back by id and by query. Item i has the id
// "co-i" and is items[i-1].
type clockCosmos struct {
	c     *azcosmos.ContainerClient
	mu    sync.Mutex
	items []*clockCOItem
	reads atomic.Int64 // items read back (point read or query) before their due time
	gone  atomic.Int64 // reads that found an item gone after its due time
}

type clockCOItem struct {
	due     time.Time // _ts plus its TTL, own or the container's (CO-1, CO-4)
	expired bool
}

func clockCosmosPK(i int) string { return "p" + strconv.Itoa(i%clockCOParts) }

func clockCosmosSetup(t *testing.T, l *Lapse) *clockCosmos {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: l.TLS()}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := l.CosmosClient(CosmosKey, tr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "clock"}, nil); err != nil {
		t.Fatal(err)
	}
	db, err := c.NewDatabase("clock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "items", DefaultTimeToLive: to.Ptr(int32(clockCODefaultTTL)),
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	cc, err := db.NewContainer("items")
	if err != nil {
		t.Fatal(err)
	}
	return &clockCosmos{c: cc}
}

func (co *clockCosmos) run(t *testing.T, r *clockRun, seed uint64, wg *sync.WaitGroup) {
	wg.Add(2)
	go co.write(t, r, rand.New(rand.NewPCG(seed, 3)), wg)
	go co.read(t, r, rand.New(rand.NewPCG(seed, 4)), wg)
}

// write creates items, 70% with a ttl of their own between 1 and 600 s.
func (co *clockCosmos) write(t *testing.T, r *clockRun, rng *rand.Rand, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 1; i <= clockCOMax && !r.stop.Load(); i++ {
		doc := map[string]any{"id": "co-" + strconv.Itoa(i), "pk": clockCosmosPK(i), "n": i}
		ttl := time.Duration(clockCODefaultTTL) * time.Second
		if rng.IntN(10) < 7 {
			ttl = clockLogUniform(rng, time.Second, 600*time.Second).Round(time.Second)
			doc["ttl"] = int(ttl / time.Second)
		}
		body, _ := json.Marshal(doc)
		lo := r.lower()
		resp, err := co.c.CreateItem(context.Background(), azcosmos.NewPartitionKeyString(clockCosmosPK(i)), body,
			&azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
		if err != nil {
			t.Errorf("cosmos create co-%d: %v", i, err)
			return
		}
		hi := r.upper()
		var got struct {
			TS int64 `json:"_ts"`
		}
		if err := json.Unmarshal(resp.Value, &got); err != nil || got.TS == 0 {
			t.Errorf("cosmos create co-%d answered %s (%v)", i, resp.Value, err)
			return
		}
		ts := time.Unix(got.TS, 0)
		if ts.Before(lo.Truncate(time.Second)) || ts.After(hi) {
			r.violate("cosmos co-%d written with _ts %v, outside the clock's %v..%v while it was written", i, ts, lo, hi)
		}
		co.mu.Lock()
		co.items = append(co.items, &clockCOItem{due: ts.Add(ttl)})
		co.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

// read reads recent items back, by id and every tenth time by a query of
// one partition, and checks each answer against the items' due times: an
// item read at a clock at or past its due time is late (CO-6), one missing
// at a clock before it is early.
func (co *clockCosmos) read(t *testing.T, r *clockRun, rng *rand.Rand, wg *sync.WaitGroup) {
	defer wg.Done()
	for k := 0; !r.stop.Load(); k++ {
		co.mu.Lock()
		n := len(co.items)
		co.mu.Unlock()
		if n == 0 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		from := max(0, n-300) // recent items: some live, some not
		var err error
		if k%10 == 9 {
			err = co.query(r, clockCosmosPK(rng.IntN(clockCOParts)), from, n)
		} else {
			err = co.readOne(r, from+1+rng.IntN(n-from))
		}
		if err != nil {
			t.Errorf("cosmos read: %v", err)
			return
		}
		time.Sleep(3 * time.Millisecond)
	}
}

func (co *clockCosmos) due(i int) time.Time {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.items[i-1].due
}

// rule: CO-6 (CO-1, CO-4)
func (co *clockCosmos) readOne(r *clockRun, i int) error {
	id, due := "co-"+strconv.Itoa(i), co.due(i)
	lo := r.lower()
	_, err := co.c.ReadItem(context.Background(), azcosmos.NewPartitionKeyString(clockCosmosPK(i)), id, nil)
	hi := r.upper()
	var re *azcore.ResponseError
	switch {
	case err == nil:
		co.reads.Add(1)
		if !lo.Before(due) {
			r.violate("cosmos %s read with lapse's clock at %v or later, at or after its due time %v (CO-6)", id, lo.Format(time.RFC3339Nano), due)
		}
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		co.gone.Add(1)
		if hi.Before(due) {
			r.violate("cosmos %s gone (404) with lapse's clock at %v or earlier, before its due time %v", id, hi.Format(time.RFC3339Nano), due)
		}
	default:
		return err
	}
	return nil
}

// query reads the items of partition pk among items from+1..n.
func (co *clockCosmos) query(r *clockRun, pk string, from, n int) error {
	lo := r.lower()
	p := co.c.NewQueryItemsPager("SELECT c.n FROM c WHERE c.n > @from AND c.n <= @n", azcosmos.NewPartitionKeyString(pk),
		&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@from", Value: from}, {Name: "@n", Value: n}}})
	seen := map[int]bool{}
	for p.More() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			return err
		}
		for _, raw := range page.Items {
			var it struct {
				N int `json:"n"`
			}
			if err := json.Unmarshal(raw, &it); err != nil || it.N <= from || it.N > n || clockCosmosPK(it.N) != pk {
				r.violate("cosmos query of %s items %d..%d answered %s", pk, from+1, n, raw)
				continue
			}
			seen[it.N] = true
		}
	}
	hi := r.upper()
	for i := from + 1; i <= n; i++ {
		if clockCosmosPK(i) != pk {
			continue
		}
		switch due := co.due(i); {
		case seen[i]:
			co.reads.Add(1)
			if !lo.Before(due) {
				r.violate("cosmos co-%d in a query with lapse's clock at %v or later, at or after its due time %v (CO-6)", i, lo.Format(time.RFC3339Nano), due)
			}
		case hi.Before(due):
			r.violate("cosmos co-%d missing from a query with lapse's clock at %v or earlier, before its due time %v", i, hi.Format(time.RFC3339Nano), due)
		default:
			co.gone.Add(1)
		}
	}
	return nil
}

// expired checks an expiry event against the item it names.
func (co *clockCosmos) expired(r *clockRun, ev Event) {
	co.mu.Lock()
	defer co.mu.Unlock()
	i, ok := clockItemIndex(ev.ItemKey, "co-")
	if ev.Entity != "clock/items" || !ok || i > len(co.items) {
		r.violate("cosmos event %d names item %q of %q; %d were written to clock/items: %+v", ev.ID, ev.ItemKey, ev.Entity, len(co.items), ev)
		return
	}
	it := co.items[i-1]
	switch {
	case it.expired:
		r.violate("cosmos co-%d has two expiry events (the second %d)", i, ev.ID)
	case ev.Rule != "CO-6":
		r.violate("cosmos event %d: rule %q, want CO-6: %+v", ev.ID, ev.Rule, ev)
	case !ev.Due.Equal(it.due):
		r.violate("cosmos co-%d expired as due at %v, want %v (_ts + ttl)", i, ev.Due, it.due)
	}
	it.expired = true
}

// account checks that every item written expired: the final step passes
// every TTL.
func (co *clockCosmos) account(r *clockRun) {
	co.mu.Lock()
	defer co.mu.Unlock()
	for i, it := range co.items {
		if !it.expired {
			r.violate("cosmos co-%d (due %v) has no expiry event", i+1, it.due)
		}
	}
}

func (co *clockCosmos) written() int {
	co.mu.Lock()
	defer co.mu.Unlock()
	return len(co.items)
}

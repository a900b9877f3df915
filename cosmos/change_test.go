package cosmos_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
)

// issue 16.4: a conditional write reads and writes at one instant. A
// document that expires between a write's read and its write is gone at
// the write: a replace, a patch or a batch's replace of it answers 404, as
// the service does, rather than writing the document anew (CO-6).
func TestWriteOfADocumentExpiringBeforeTheWriteIs404_CO6(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		write func(c *azcosmos.ContainerClient) (status int, err error)
	}{{
		name: "Replace",
		write: func(c *azcosmos.ContainerClient) (int, error) {
			_, err := c.ReplaceItem(ctx, pkOf("p"), "a", []byte(`{"id":"a","pk":"p","v":2}`), nil)
			return statusOf(err), nil
		},
	}, {
		name: "Patch",
		write: func(c *azcosmos.ContainerClient) (int, error) {
			ops := azcosmos.PatchOperations{}
			ops.AppendSet("/v", 2)
			_, err := c.PatchItem(ctx, pkOf("p"), "a", ops, nil)
			return statusOf(err), nil
		},
	}, {
		name: "BatchReplace",
		write: func(c *azcosmos.ContainerClient) (int, error) {
			b := c.NewTransactionalBatch(pkOf("p"))
			b.ReplaceItem("a", []byte(`{"id":"a","pk":"p","v":2}`), nil)
			r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
			if err != nil {
				return 0, err
			}
			return int(r.OperationResults[0].StatusCode), nil
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustServer(t)
			c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", ptr[int32](10))
			f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p", "v": 1})
			f.advance(9 * time.Second)
			var once sync.Once
			// The clock reaches the document's due time after the write
			// has read it and before it writes.
			cosmos.SetBeforeChange(f.s, func() { once.Do(func() { f.advance(time.Second) }) })
			status, err := tc.write(c)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusNotFound {
				t.Errorf("the write of a document that expired before it was written answered %d, want 404", status)
			}
			if got := f.read(c, "p", "a"); got != nil {
				t.Errorf("the expired document was written anew: %v", got)
			}
			var expired []string
			for _, ev := range f.e.Events(core.EventQuery{Protocol: core.Cosmos}) {
				expired = append(expired, fmt.Sprintf("%s %s %s", ev.Action, ev.Rule, ev.Time.Sub(t0)))
			}
			if d := cmp.Diff([]string{"expired CO-6 10s"}, expired); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// issue 16.4: replaces and patches with If-Match from many goroutines at
// once, all of them reading the document before any writes: exactly one
// wins per ETag, every other answers 412, round after round.
func TestIfMatchWritesFromManyGoroutinesOneWinsPerETag(t *testing.T) {
	const writers, rounds = 16, 5
	ctx := context.Background()
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	etag := f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p", "n": 0}).ETag
	var (
		gateMu sync.Mutex
		gate   *barrier
	)
	cosmos.SetBeforeChange(f.s, func() {
		gateMu.Lock()
		g := gate
		gateMu.Unlock()
		g.wait()
	})
	for round := range rounds {
		gateMu.Lock()
		gate = newBarrier(writers)
		gateMu.Unlock()
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
			winner   azcore.ETag
		)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opts := &azcosmos.ItemOptions{IfMatchEtag: &etag}
				var (
					resp azcosmos.ItemResponse
					err  error
				)
				if w%2 == 0 {
					resp, err = c.ReplaceItem(ctx, pkOf("p"), "a", []byte(fmt.Sprintf(`{"id":"a","pk":"p","n":%d}`, w)), opts)
				} else {
					ops := azcosmos.PatchOperations{}
					ops.AppendSet("/n", w)
					resp, err = c.PatchItem(ctx, pkOf("p"), "a", ops, opts)
				}
				mu.Lock()
				defer mu.Unlock()
				statuses[statusOf(err)]++
				if err == nil {
					winner = resp.ETag
				}
			}()
		}
		wg.Wait()
		if want := map[int]int{0: 1, http.StatusPreconditionFailed: writers - 1}; !cmp.Equal(statuses, want) {
			t.Fatalf("round %d: statuses %v, want %v (0: success)", round, statuses, want)
		}
		resp, err := c.ReadItem(ctx, pkOf("p"), "a", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ETag != winner {
			t.Fatalf("round %d: stored ETag %s, want the winner's %s", round, resp.ETag, winner)
		}
		etag = winner
	}
}

// barrier holds the first n callers of wait until all n have come, or for
// at most 2 s; later callers pass.
type barrier struct {
	mu   sync.Mutex
	n    int
	all  chan struct{}
	came int
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.came++
	came := b.came
	if came == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	if came > b.n {
		return
	}
	select {
	case <-b.all:
	case <-time.After(2 * time.Second):
	}
}

// issue 16.4: upserts and replaces without a condition from many goroutines
// at once, all of them reading the document before any writes: each is
// planned again on what the others wrote and every one succeeds.
func TestUnconditionalWritesFromManyGoroutinesAllSucceed(t *testing.T) {
	const writers = 16
	ctx := context.Background()
	f := MustServer(t)
	c := f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	f.MustCreate(c, "p", map[string]any{"id": "a", "pk": "p", "n": 0})
	gate := newBarrier(writers)
	cosmos.SetBeforeChange(f.s, gate.wait)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := []byte(fmt.Sprintf(`{"id":"a","pk":"p","n":%d}`, w))
			var err error
			if w%2 == 0 {
				_, err = c.UpsertItem(ctx, pkOf("p"), body, nil)
			} else {
				_, err = c.ReplaceItem(ctx, pkOf("p"), "a", body, nil)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a write failed (status %d): %v", statusOf(err), err)
		}
	}
}

package cosmos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// mustUniqueContainer creates container id of db, partitioned by /pk,
// with the unique keys keys and, when ttl is not nil, that defaultTtl.
func (f *fixture) mustUniqueContainer(db *azcosmos.DatabaseClient, id string, ttl *int32, keys ...[]string) *azcosmos.ContainerClient {
	f.tb.Helper()
	policy := &azcosmos.UniqueKeyPolicy{}
	for _, k := range keys {
		policy.UniqueKeys = append(policy.UniqueKeys, azcosmos.UniqueKey{Paths: k})
	}
	props := azcosmos.ContainerProperties{ID: id, DefaultTimeToLive: ttl, UniqueKeyPolicy: policy,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(context.Background(), props, nil); err != nil {
		f.tb.Fatal(err)
	}
	c, err := db.NewContainer(id)
	if err != nil {
		f.tb.Fatal(err)
	}
	return c
}

// user is a document of the tests' containers.
func user(id, pk, email string) []byte {
	b, _ := json.Marshal(map[string]string{"id": id, "pk": pk, "email": email})
	return b
}

// statusOrOK returns the HTTP status of err, 200 for nil.
func statusOrOK(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return -1
}

// wantUniqueViolation fails the test unless err is the service's 409 for
// a unique key.
func wantUniqueViolation(t *testing.T, what string, err error) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Fatalf("%s: %v, want 409 Conflict", what, err)
	}
	body, _ := readAll(re.RawResponse)
	if !strings.Contains(body, "Unique index constraint violation.") {
		t.Errorf("%s: 409 with %s, want the service's unique index message", what, body)
	}
}

func readAll(resp *http.Response) (string, error) {
	if resp == nil || resp.Body == nil {
		return "", nil
	}
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String(), nil
		}
	}
}

// issue 28.3: a container's unique key holds within a partition key value
// through every write path; a refused write stores nothing of itself.
func TestUniqueKeyHoldsThroughEveryWritePath(t *testing.T) {
	ctx := context.Background()
	f := MustServer(t)
	db := f.MustDatabase("shop")
	c := f.mustUniqueContainer(db, "users", nil, []string{"/email"})
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.CreateItem(ctx, pk, user("a", "p1", "a@x"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateItem(ctx, pk, user("b", "p1", "b@x"), nil); err != nil {
		t.Fatal(err)
	}
	emails := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, id := range f.queryIDs(c, "p1", "SELECT * FROM c", nil) {
			out[id] = f.read(c, "p1", id)["email"].(string)
		}
		return out
	}
	before := emails()

	t.Run("Create", func(t *testing.T) {
		_, err := c.CreateItem(ctx, pk, user("c", "p1", "a@x"), nil)
		wantUniqueViolation(t, "create", err)
	})
	t.Run("Upsert", func(t *testing.T) {
		_, err := c.UpsertItem(ctx, pk, user("b", "p1", "a@x"), nil)
		wantUniqueViolation(t, "upsert over b", err)
		_, err = c.UpsertItem(ctx, pk, user("c", "p1", "a@x"), nil)
		wantUniqueViolation(t, "upsert of a new c", err)
	})
	t.Run("Replace", func(t *testing.T) {
		_, err := c.ReplaceItem(ctx, pk, "b", user("b", "p1", "a@x"), nil)
		wantUniqueViolation(t, "replace", err)
	})
	t.Run("Patch", func(t *testing.T) {
		ops := azcosmos.PatchOperations{}
		ops.AppendSet("/email", "a@x")
		_, err := c.PatchItem(ctx, pk, "b", ops, nil)
		wantUniqueViolation(t, "patch", err)
	})
	t.Run("TransactionalBatch", func(t *testing.T) {
		b := c.NewTransactionalBatch(pk)
		b.CreateItem(user("c", "p1", "c@x"), nil)
		b.UpsertItem(user("d", "p1", "a@x"), nil)
		b.DeleteItem("b", nil)
		resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []int32
		for _, r := range resp.OperationResults {
			got = append(got, r.StatusCode)
		}
		if resp.Success || fmt.Sprint(got) != "[424 409 424]" {
			t.Errorf("batch: success %v, statuses %v; want [424 409 424]", resp.Success, got)
		}
	})
	t.Run("Bulk", func(t *testing.T) {
		body := `[{"operationType":"Create","partitionKey":"[\"p1\"]","resourceBody":{"id":"c","pk":"p1","email":"a@x"}},` +
			`{"operationType":"Create","partitionKey":"[\"p1\"]","resourceBody":{"id":"d","pk":"p1","email":"d@x"}}]`
		r := f.do("POST", "/dbs/shop/colls/users/docs", "docs", "dbs/shop/colls/users", []byte(body), map[string]string{
			"x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "false", "Content-Type": "application/json"})
		var results []struct {
			StatusCode int `json:"statusCode"`
		}
		if err := json.Unmarshal(r.body, &results); err != nil {
			t.Fatalf("bulk: %d %s", r.status, r.body)
		}
		if r.status != http.StatusMultiStatus || len(results) != 2 || results[0].StatusCode != 409 || results[1].StatusCode != 201 {
			t.Errorf("bulk: %d %s; want 207, a 409 and a 201", r.status, r.body)
		}
		if _, err := c.DeleteItem(ctx, pk, "d", nil); err != nil {
			t.Fatal(err)
		}
	})
	if got := emails(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("after the refused writes: %v, want %v as before", got, before)
	}

	t.Run("AnotherPartitionKeyValueIsFree", func(t *testing.T) {
		if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("p2"), user("c", "p2", "a@x"), nil); err != nil {
			t.Fatalf("the same email under another partition key: %v", err)
		}
	})
	t.Run("ADeleteFreesItsValue", func(t *testing.T) {
		if _, err := c.DeleteItem(ctx, pk, "a", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateItem(ctx, pk, user("c", "p1", "a@x"), nil); err != nil {
			t.Fatalf("create after the holder's delete: %v", err)
		}
	})
	t.Run("AReplaceKeepsItsOwnValueAndFreesTheOld", func(t *testing.T) {
		if _, err := c.ReplaceItem(ctx, pk, "b", user("b", "p1", "b@x"), nil); err != nil {
			t.Fatalf("replace with its own value: %v", err)
		}
		if _, err := c.ReplaceItem(ctx, pk, "b", user("b", "p1", "b2@x"), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateItem(ctx, pk, user("d", "p1", "b@x"), nil); err != nil {
			t.Fatalf("create with the value b had before: %v", err)
		}
	})
	t.Run("ABatchMaySwapValues", func(t *testing.T) {
		// c holds a@x and d b@x; one batch swaps them.
		b := c.NewTransactionalBatch(pk)
		b.ReplaceItem("c", user("c", "p1", "b@x"), nil)
		b.ReplaceItem("d", user("d", "p1", "a@x"), nil)
		resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil || !resp.Success {
			t.Fatalf("swap: %v, success %v", err, resp.Success)
		}
	})
}

// issue 28.3: a missing path counts as a value (null's), so one item per
// partition key value at most may lack it; the values of a key with
// several paths are compared together, and case counts.
func TestUniqueKeyValues(t *testing.T) {
	ctx := context.Background()
	f := MustServer(t)
	db := f.MustDatabase("shop")
	c := f.mustUniqueContainer(db, "people", nil, []string{"/first", "/last"}, []string{"/badge"})
	pk := azcosmos.NewPartitionKeyString("p1")
	for _, tc := range []struct {
		doc  string
		want int
	}{
		{`{"id":"1","pk":"p1","first":"Ada","last":"Lovelace","badge":1}`, http.StatusCreated},
		{`{"id":"2","pk":"p1","first":"Ada","last":"Byron","badge":2}`, http.StatusCreated},
		{`{"id":"3","pk":"p1","first":"Ada","last":"Lovelace","badge":3}`, http.StatusConflict},
		{`{"id":"4","pk":"p1","first":"ada","last":"Lovelace","badge":4}`, http.StatusCreated},
		{`{"id":"5","pk":"p1","first":"Grace","last":"Hopper","badge":1}`, http.StatusConflict},
		{`{"id":"6","pk":"p1","first":"Grace","last":"Hopper"}`, http.StatusCreated},
		{`{"id":"7","pk":"p1","first":"Alan","last":"Turing"}`, http.StatusConflict},
		{`{"id":"8","pk":"p1","first":"Alan","last":"Turing","badge":null}`, http.StatusConflict},
		{`{"id":"9","pk":"p1","first":"Alan","last":"Turing","badge":"1"}`, http.StatusCreated},
	} {
		resp, err := c.CreateItem(ctx, pk, []byte(tc.doc), nil)
		got := statusOrOK(err)
		if err == nil {
			got = int(resp.RawResponse.StatusCode)
		}
		if got != tc.want {
			t.Errorf("create %s: %d (%v), want %d", tc.doc, got, err, tc.want)
		}
	}
}

// issue 28.3: many writers racing to create items with one unique value in
// one partition: exactly one wins, every other gets the 409.
func TestUniqueKeyRace(t *testing.T) {
	ctx := context.Background()
	f := MustServer(t)
	db := f.MustDatabase("shop")
	c := f.mustUniqueContainer(db, "users", nil, []string{"/email"})
	pk := azcosmos.NewPartitionKeyString("p1")
	const writers = 32
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = c.CreateItem(ctx, pk, user(fmt.Sprint("u", i), "p1", "same@x"), nil)
			} else {
				_, err = c.UpsertItem(ctx, pk, user(fmt.Sprint("u", i), "p1", "same@x"), nil)
			}
			statuses[i] = statusOrOK(err)
		})
	}
	wg.Wait()
	won, lost := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			won++
		case http.StatusConflict:
			lost++
		}
	}
	if won != 1 || lost != writers-1 {
		t.Errorf("%d writers won and %d got 409 (%v), want 1 and %d", won, lost, statuses, writers-1)
	}
	if ids := f.queryIDs(c, "p1", "SELECT * FROM c", nil); len(ids) != 1 {
		t.Errorf("stored %v, want one item", ids)
	}
}

// issue 28.3: an item that expires frees its unique values at its expiry,
// on lapse's clock, with no read of it first: rule CO-4 (the container's
// defaultTtl counts from the item's last write) and CO-6 (an expired item
// is gone at once).
func TestUniqueValueFreedByExpiry_CO4_CO6(t *testing.T) {
	ctx := context.Background()
	f := MustServer(t)
	db := f.MustDatabase("shop")
	ttl := int32(60)
	c := f.mustUniqueContainer(db, "sessions", &ttl, []string{"/email"})
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.CreateItem(ctx, pk, user("a", "p1", "a@x"), nil); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(59 * time.Second)
	_, err := c.CreateItem(ctx, pk, user("b", "p1", "a@x"), nil)
	wantUniqueViolation(t, "a second of life left", err)
	// The clock only moves: no Advance of the engine, no read of a.
	f.clock.Advance(time.Second)
	if _, err := c.CreateItem(ctx, pk, user("b", "p1", "a@x"), nil); err != nil {
		t.Fatalf("create once the holder expired: %v", err)
	}
}

// issue 28.3: the rule holds after a restart: the store does not keep the
// unique values, and the engine derives them again at Recover.
func TestUniqueKeyHoldsAfterRestart(t *testing.T) {
	ctx := context.Background()
	f := MustServer(t)
	db := f.MustDatabase("shop")
	c := f.mustUniqueContainer(db, "users", nil, []string{"/email"})
	pk := azcosmos.NewPartitionKeyString("p1")
	if _, err := c.CreateItem(ctx, pk, user("a", "p1", "a@x"), nil); err != nil {
		t.Fatal(err)
	}
	f2 := MustServerOn(t, f.store, f.clock.Now())
	c2, err := f2.client.NewContainer("shop", "users")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c2.CreateItem(ctx, pk, user("b", "p1", "a@x"), nil)
	wantUniqueViolation(t, "after the restart", err)
}

// issue 28.3: the service's limits on a uniqueKeyPolicy at container
// creation, with its 400s, and a policy fixed at creation: a replace that
// changes it, or leaves it out, is 403.
func TestUniqueKeyPolicyLimitsAndReplace(t *testing.T) {
	ctx := context.Background()
	f := MustServer(t)
	db := f.MustDatabase("shop")
	paths := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprint("/p", i))
		}
		return out
	}
	keys := func(n int) []azcosmos.UniqueKey {
		var out []azcosmos.UniqueKey
		for i := range n {
			out = append(out, azcosmos.UniqueKey{Paths: []string{fmt.Sprint("/k", i)}})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		keys []azcosmos.UniqueKey
		want int
	}{
		{"TenKeys", keys(10), http.StatusCreated},
		{"ElevenKeys", keys(11), http.StatusBadRequest},
		{"SixteenPaths", []azcosmos.UniqueKey{{Paths: paths(16)}}, http.StatusCreated},
		{"SeventeenPaths", []azcosmos.UniqueKey{{Paths: paths(17)}}, http.StatusBadRequest},
		{"NoPaths", []azcosmos.UniqueKey{{Paths: []string{}}}, http.StatusBadRequest},
		{"PathWithoutSlash", []azcosmos.UniqueKey{{Paths: []string{"email"}}}, http.StatusBadRequest},
		{"Wildcard", []azcosmos.UniqueKey{{Paths: []string{"/email/*"}}}, http.StatusBadRequest},
		{"TrailingSlash", []azcosmos.UniqueKey{{Paths: []string{"/email/"}}}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := azcosmos.ContainerProperties{ID: "c" + tc.name, UniqueKeyPolicy: &azcosmos.UniqueKeyPolicy{UniqueKeys: tc.keys},
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
			resp, err := db.CreateContainer(ctx, props, nil)
			got := statusOrOK(err)
			if err == nil {
				got = resp.RawResponse.StatusCode
			}
			if got != tc.want {
				t.Errorf("create: %d (%v), want %d", got, err, tc.want)
			}
		})
	}

	c := f.mustUniqueContainer(db, "users", nil, []string{"/email"})
	props := func(keys ...string) azcosmos.ContainerProperties {
		p := azcosmos.ContainerProperties{ID: "users", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
		if keys != nil {
			p.UniqueKeyPolicy = &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: keys}}}
		}
		return p
	}
	ttl := int32(3600)
	same := props("/email")
	same.DefaultTimeToLive = &ttl
	if _, err := c.Replace(ctx, same, nil); err != nil {
		t.Fatalf("replace with the same unique keys: %v", err)
	}
	for name, p := range map[string]azcosmos.ContainerProperties{"Changed": props("/name"), "LeftOut": props()} {
		_, err := c.Replace(ctx, p, nil)
		if got := statusOrOK(err); got != http.StatusForbidden {
			t.Errorf("replace, unique keys %s: %d (%v), want 403", name, got, err)
		}
	}
	_, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("p1"), user("a", "p1", "a@x"), nil)
	if err == nil {
		_, err = c.CreateItem(ctx, azcosmos.NewPartitionKeyString("p1"), user("b", "p1", "a@x"), nil)
	}
	wantUniqueViolation(t, "after the refused replaces", err)
}

package cosmos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos"
)

// accountReads is an azcosmos pipeline policy that keeps the body of each
// account read (GET /) the client makes.
type accountReads struct{ bodies [][]byte }

func (a *accountReads) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && req.Raw().Method == http.MethodGet && req.Raw().URL.Path == "/" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		a.bodies = append(a.bodies, b)
	}
	return resp, err
}

// issue 26.7: the account's default consistency level, the official
// emulator's /Consistency (Session unless told), is what azcosmos reads in
// the account; a request may ask for it or a weaker level, and one that
// asks for a stronger level gets the service's 400.
func TestIssue26_7_ConsistencyThroughAzcosmos(t *testing.T) {
	ctx := context.Background()
	levels := []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelStrong, azcosmos.ConsistencyLevelBoundedStaleness,
		azcosmos.ConsistencyLevelSession, azcosmos.ConsistencyLevelConsistentPrefix, azcosmos.ConsistencyLevelEventual}
	for _, tc := range []struct {
		config, account string
		// allowed[i] is whether a read at levels[i] is served.
		allowed []bool
	}{
		{"", "Session", []bool{false, false, true, true, true}},
		{"Strong", "Strong", []bool{true, true, true, true, true}},
		{"boundedstaleness", "BoundedStaleness", []bool{false, true, true, true, true}},
		{"ConsistentPrefix", "ConsistentPrefix", []bool{false, false, false, true, true}},
		{"Eventual", "Eventual", []bool{false, false, false, false, true}},
	} {
		t.Run(tc.account, func(t *testing.T) {
			f := MustServerWith(t, func(c *cosmos.Config) { c.DefaultConsistencyLevel = tc.config })
			reads := &accountReads{}
			cred, _ := azcosmos.NewKeyCredential(cosmos.EmulatorKey)
			client, err := azcosmos.NewClientWithKey(f.endpoint, cred, &azcosmos.ClientOptions{
				ClientOptions: azcore.ClientOptions{Transport: f.http, PerCallPolicies: []policy.Policy{reads}},
			})
			if err != nil {
				t.Fatal(err)
			}
			f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
			c, _ := client.NewContainer("db", "c")
			pk := azcosmos.NewPartitionKeyString("p")
			if _, err := c.CreateItem(ctx, pk, []byte(`{"id":"a","pk":"p"}`), nil); err != nil {
				t.Fatal(err)
			}
			if len(reads.bodies) == 0 {
				t.Fatal("azcosmos read no account")
			}
			var a account
			if err := json.Unmarshal(reads.bodies[0], &a); err != nil || a.UserConsistencyPolicy.DefaultConsistencyLevel != tc.account {
				t.Errorf("account's userConsistencyPolicy %+v (%v), want %s", a.UserConsistencyPolicy, err, tc.account)
			}

			var got []bool
			for _, level := range levels {
				_, err := c.ReadItem(ctx, pk, "a", &azcosmos.ItemOptions{ConsistencyLevel: level.ToPtr()})
				switch {
				case err == nil:
					got = append(got, true)
				case statusOf(err) == http.StatusBadRequest:
					want := "ConsistencyLevel " + string(level) + " specified in the request is invalid when service is configured with consistency level " + tc.account
					if !strings.Contains(err.Error(), want) {
						t.Errorf("read at %s: %v, want %q", level, err, want)
					}
					got = append(got, false)
				default:
					t.Fatalf("read at %s: %v", level, err)
				}
			}
			if d := cmp.Diff(tc.allowed, got); d != "" {
				t.Errorf("reads served at Strong, BoundedStaleness, Session, ConsistentPrefix, Eventual (-want +got):\n%s", d)
			}
			// A query asks through the same header.
			pager := c.NewQueryItemsPager("SELECT * FROM c", pk, &azcosmos.QueryOptions{ConsistencyLevel: azcosmos.ConsistencyLevelStrong.ToPtr()})
			_, err = pager.NextPage(ctx)
			if (err == nil) != tc.allowed[0] {
				t.Errorf("query at Strong: %v", err)
			}
		})
	}
}

// issue 26.7: a level that is none, in the header, is a 400; the
// partition count is the official emulator's: 25 unless told, 1 to 250.
func TestIssue26_7_ConsistencyHeaderAndPartitionCount(t *testing.T) {
	f := MustServer(t)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	got := f.raw("GET", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", nil, map[string]string{"x-ms-consistency-level": "Linearizable"})
	if got.status != http.StatusBadRequest {
		t.Errorf("a read feed at Linearizable: %d %s", got.status, got.body)
	}
	// The account read is not refused: the SDKs send their client's
	// level with it.
	if got := f.raw("GET", "/", "", "", nil, map[string]string{"x-ms-consistency-level": "Strong"}); got.status != http.StatusOK {
		t.Errorf("the account read with Strong on a Session account: %d %s", got.status, got.body)
	}

	for _, n := range []int{-1, 251} {
		_, err := cosmos.NewServer(cosmos.Config{Addr: "127.0.0.1:0", Engine: f.e, Now: f.clock.Now, PartitionCount: n})
		if core.ErrorCode(err) != core.EINVALID {
			t.Errorf("NewServer with %d partitions: %v, want EINVALID", n, err)
		}
	}
	for _, n := range []int{1, cosmos.MaxPartitionCount} {
		if err := cosmos.CheckPartitionCount(n); err != nil {
			t.Errorf("%d partitions: %v", n, err)
		}
	}
	if cosmos.DefaultPartitionCount != 25 {
		t.Errorf("DefaultPartitionCount %d, want the official emulator's 25", cosmos.DefaultPartitionCount)
	}
}

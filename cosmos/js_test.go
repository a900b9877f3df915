package cosmos_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// The official JS SDK, @azure/cosmos, against the server: each scenario of
// jstest/scenarios.mjs runs in node against a fresh server on a frozen
// clock, with the server's plain HTTP endpoint and EmulatorKey as they are,
// and prints one JSON line, checked here.

// jsScenario is one scenario of scenarios.mjs and what its line must say.
type jsScenario struct {
	name string
	// want is what the line decodes to; the line is decoded into a value of
	// want's type, so fields that vary between runs are left out of it.
	want any
	// check, when set, looks at what want cannot pin down.
	check func(t *testing.T, f *fixture, line []byte)
}

func TestJSClient_Scenarios(t *testing.T) {
	node := clienttest.Node(t, jsDir, "@azure/cosmos")
	type database struct {
		ID                       string
		Status                   int
		HasRid, HasEtag, HasSelf bool
	}
	type containerView struct {
		ID         string
		Paths      []string
		Kind       string
		Version    *int
		DefaultTTL *int `json:"defaultTtl"`
	}
	type scripts struct {
		IDs        []string `json:"ids"`
		Thrown     int
		AfterThrow []string
		UpperID    string
		Doubled    []float64
		Sprocs     []string
	}
	type databasesContainers struct {
		CreateDuplicate            int
		ReadDatabase               database
		ListDatabases              []string
		QueryDatabases             []string
		CreateIfNotExistsStatus    int
		CreateContainerDuplicate   int
		Containers                 []containerView
		ListContainers             []string
		QueryContainers            []string
		ReplacedDefaultTTL         *int `json:"replacedDefaultTtl"`
		ReadDeletedContainer       int
		ListAfterDelete            []string
		ReadDeletedDatabase        int
		ListDatabasesAfterDelete   []string
		ContainerOfDeletedDatabase int
	}
	type items struct {
		Create struct {
			Status             int
			V                  int
			EtagMatches, HasTs bool
		}
		CreateDuplicate int
		Read            struct {
			Status   int
			V        int
			SameEtag bool
		}
		ReadMissing, ReadOtherPartition int
		IfNoneMatchSame                 struct {
			Status   int
			Resource any
		}
		ReplaceIfMatch struct {
			Status, V int
			NewEtag   bool
		}
		ReplaceStale     int
		IfNoneMatchStale struct{ Status, V int }
		ReplaceMissing   int
		Upsert           struct{ NewStatus, ExistingStatus, V int }
		UpsertStale      int
		DeleteStale      int
		DeleteStatus     int
		ReadDeleted      int
		DeleteMissing    int
		OddID            string
		KeyTypes         []int
		Hier             struct {
			Read, Missing, TenantQuery, Replaced, Deleted int
			Left                                          []int
		}
	}
	type patchedDoc struct {
		N      int
		Tags   []string
		Nested map[string]any
		Old    string
		Moved  string
		Added  *string
	}
	type patch struct {
		Status             int
		Doc                patchedDoc
		ConditionFalse     int
		ConditionTrue      struct{ Status, X int }
		IfMatchStale       int
		ReplaceMissingPath int
		MissingItem        int
		Final              int
	}
	type patchArray struct {
		Status, N int
		Added     string
		Batch     struct {
			Code     int
			Statuses []int
			N        int
		}
	}
	type batchResult struct {
		Code     int
		Statuses []int
		ReadV    int
		Etags    bool
	}
	type batch struct {
		OK     batchResult `json:"ok"`
		Failed batchResult
		After  struct{ Fresh, Up, NewV, Gone, OldV int }
	}
	type bulk struct {
		Statuses []int
		Legacy   []int
		After    struct{ A, Old, B int }
	}
	type query struct {
		Params          []string
		Paged           [][]string
		FirstPage       []string
		HasContinuation bool
		Resumed         []string
		Values          []int
		AsyncPages      [][]string
		BadQuery        int
	}
	type group struct {
		PK      string `json:"pk"`
		N       int
		Highest int
	}
	type crossPartition struct {
		OrderBy      []string
		OrderByPaged [][]string
		Count        []int
		Sum          []int
		GroupBy      []group
		Distinct     []string
		OffsetLimit  []string
		Top          []string
		Filtered     []string
		CrossPaged   []int
	}
	type planGroup struct {
		PK         string
		N, Highest int
		Mean       float64
	}
	type forceQueryPlan struct {
		Filtered, OrderBy, OrderByTwo []string
		OrderByValue                  []int
		Count, Sum                    []int
		Avg                           []float64
		Min                           []int
		Max                           []string
		EmptyMax                      []int
		Counts                        []struct{ N, Total int }
		GroupBy                       []planGroup
		GroupByValue                  []string
		Distinct, DistinctOrdered     []string
		OffsetLimit                   []string
		OffsetLimitUnordered          int
		Top                           []string
		OrderByPages, Pages           []int
	}
	type ranges struct {
		FeedRanges, PerRangeTotal, RangesUsed, ChangeFeed int
		OrderBy, Count, Max                               []int
		Groups                                            int
		Top, OffsetLimit, ByKey, Pinned                   []int
		ReadAll, Read                                     int
		OneToken, LSNs                                    bool
		SessionRanges                                     []string
	}
	type fullTextSearch struct {
		Contains, ContainsAny, Rank, RRF []string
		Policy                           struct {
			DefaultLanguage string
			FullTextPaths   []struct{ Path, Language string }
		}
	}
	type readAll struct {
		PageSizes      []int
		IDs            []string
		PartitionPages [][]string
		All            int
	}
	type feedRead struct {
		Status int
		IDs    []string
	}
	type changeFeed struct {
		Beginning, Now, Partition, BeginningAgain, AfterWrites feedRead
		NowAfterWrites, PartitionAfterWrites                   []string
		Resumed                                                feedRead
		ResumedAgain                                           int
		PagedSizes                                             []int
		Legacy                                                 struct {
			Status  int
			IDs     []string
			HasMore bool
		}
		LegacyAgain struct {
			Status, Count int
			HasMore       bool
		}
		LegacyContinued feedRead
		LegacyNow       int
	}
	type avRow struct {
		Op, ID     string
		TTLExpired *bool
	}
	type avRead struct {
		Status int
		Rows   []avRow
	}
	type allVersions struct {
		Beginning, BeginningPartition, Time int
		Now, PartitionNow                   int
		All                                 avRead
		Partition                           []avRow
		Again, Resumed                      int
		PagedSizes                          []int
	}
	type ttlLook struct {
		Read                                  int
		Query                                 []string
		CrossQuery                            []int
		ReadAll, ChangeFeed, LegacyChangeFeed []string
	}
	type ttl struct {
		Before, After ttlLook
		At59          int
		FeedFirst     []string
		FeedAfter     feedRead
	}
	type wrongKey struct{ ReadDatabases, CreateDatabase, Created int }
	type resourceTokens struct {
		Permissions                      []string
		ListedTokens                     bool
		Create, Read, Upsert             int
		Query                            []string
		OtherContainer                   int
		FeedRead                         string
		FeedWrite, Databases             int
		At599, At600, FeedAt600, Renewed int
	}
	type uniqueKey struct{ Paths []string }
	type uniquePolicy struct{ UniqueKeys []uniqueKey }
	type uniqueKeys struct {
		First, Duplicate, OtherPartition int
		UniqueMessage                    bool
		Policy                           uniquePolicy
	}
	type https struct {
		Read           int
		Query          []int
		UntrustedError string
	}

	scenarios := []jsScenario{
		{name: "databases-containers", want: databasesContainers{
			CreateDuplicate: 409,
			ReadDatabase:    database{ID: "d1", Status: 200, HasRid: true, HasEtag: true, HasSelf: true},
			ListDatabases:   []string{"d1", "d2"}, QueryDatabases: []string{"d2"},
			CreateIfNotExistsStatus: 200, CreateContainerDuplicate: 409,
			Containers: []containerView{
				{ID: "plain", Paths: []string{"/pk"}, Kind: "Hash", DefaultTTL: ptr(3600)},
				{ID: "hier", Paths: []string{"/tenant", "/user"}, Kind: "MultiHash", Version: ptr(2)},
				{ID: "ttl", Paths: []string{"/pk"}, Kind: "Hash", DefaultTTL: ptr(-1)},
			},
			ListContainers: []string{"hier", "plain", "ttl"}, QueryContainers: []string{"ttl"},
			ReplacedDefaultTTL:   ptr(60),
			ReadDeletedContainer: 404, ListAfterDelete: []string{"plain", "ttl"},
			ReadDeletedDatabase: 404, ListDatabasesAfterDelete: []string{"d1"},
			ContainerOfDeletedDatabase: 404,
		}},
		{name: "items", want: func() items {
			var w items
			w.Create.Status, w.Create.V, w.Create.EtagMatches, w.Create.HasTs = 201, 1, true, true
			w.CreateDuplicate = 409
			w.Read.Status, w.Read.V, w.Read.SameEtag = 200, 1, true
			w.ReadMissing, w.ReadOtherPartition = 404, 404
			w.IfNoneMatchSame.Status = 304
			w.ReplaceIfMatch.Status, w.ReplaceIfMatch.V, w.ReplaceIfMatch.NewEtag = 200, 2, true
			w.ReplaceStale = 412
			w.IfNoneMatchStale.Status, w.IfNoneMatchStale.V = 200, 2
			w.ReplaceMissing = 404
			w.Upsert.NewStatus, w.Upsert.ExistingStatus, w.Upsert.V = 201, 200, 2
			w.UpsertStale, w.DeleteStale = 412, 412
			w.DeleteStatus, w.ReadDeleted, w.DeleteMissing = 204, 404, 404
			w.OddID = "with space+plus"
			// PartitionKey.None, 7, true, null, and "7" (not 7).
			w.KeyTypes = []int{200, 200, 200, 200, 404}
			w.Hier.Read, w.Hier.Missing, w.Hier.TenantQuery, w.Hier.Replaced, w.Hier.Deleted = 2, 404, 2, 4, 204
			w.Hier.Left = []int{2, 4}
			return w
		}()},
		{name: "patch", want: func() patch {
			w := patch{Status: 200, Doc: patchedDoc{
				N: 3, Tags: []string{"x", "y"}, Nested: map[string]any{"keep": true, "set": 5.0},
				Old: "replaced", Moved: "new",
			}}
			w.ConditionFalse, w.IfMatchStale, w.ReplaceMissingPath, w.MissingItem = 412, 412, 400, 404
			w.ConditionTrue.Status, w.ConditionTrue.X = 200, 1
			w.Final = 1
			return w
		}()},
		{name: "patch-array", want: func() patchArray {
			w := patchArray{Status: 200, N: 3, Added: "new"}
			w.Batch.Code, w.Batch.Statuses, w.Batch.N = 200, []int{200}, 13
			return w
		}()},
		{name: "batch", want: func() batch {
			w := batch{
				OK:     batchResult{Code: 200, Statuses: []int{201, 201, 200, 200, 200, 204}, ReadV: 1, Etags: true},
				Failed: batchResult{Code: 207, Statuses: []int{424, 409, 424}},
			}
			w.After.Fresh, w.After.Up, w.After.NewV, w.After.Gone, w.After.OldV = 404, 2, 11, 404, 3
			return w
		}()},
		{name: "bulk", want: func() bulk {
			w := bulk{Statuses: []int{201, 409, 200, 200, 404, 200}, Legacy: []int{201, 200}}
			w.After.A, w.After.Old, w.After.B = 6, 3, 200
			return w
		}()},
		{name: "query", want: query{
			Params:    []string{"i06"},
			Paged:     [][]string{{"i01", "i04"}, {"i07", "i10"}},
			FirstPage: []string{"i11", "i10", "i09", "i08", "i07"}, HasContinuation: true,
			Resumed:    []string{"i06", "i05", "i04", "i03", "i02", "i01", "i00"},
			Values:     []int{20, 50, 80, 110},
			AsyncPages: [][]string{{"i03"}, {"i09"}},
			BadQuery:   400,
		}},
		{name: "cross-partition", want: crossPartition{
			OrderBy:      []string{"i11", "i10", "i09", "i08", "i07", "i06", "i05", "i04", "i03", "i02", "i01", "i00"},
			OrderByPaged: [][]string{{"i00", "i01", "i02", "i03", "i04"}, {"i05", "i06", "i07", "i08", "i09"}, {"i10", "i11"}},
			Count:        []int{12}, Sum: []int{36},
			GroupBy:     []group{{"p0", 4, 9}, {"p1", 4, 10}, {"p2", 4, 11}},
			Distinct:    []string{"even", "odd"},
			OffsetLimit: []string{"i03", "i04", "i05", "i06"},
			Top:         []string{"i11", "i10", "i09"},
			Filtered:    []string{"i09", "i10", "i11"},
			CrossPaged:  []int{4, 2},
		}},
		// issue 26.1: the plan's rewritten queries, merged by the SDK's
		// pipeline, give what the whole query gives, and the pages end
		// with the rows (no empty last page).
		{name: "force-query-plan", want: forceQueryPlan{
			Filtered:     []string{"i00", "i01", "i02"},
			OrderBy:      []string{"i11", "i10", "i09", "i08", "i07", "i06", "i05", "i04", "i03", "i02", "i01", "i00"},
			OrderByTwo:   []string{"i10", "i08", "i06", "i04", "i02", "i00", "i11", "i09", "i07", "i05", "i03", "i01"},
			OrderByValue: []int{10, 7, 4, 1},
			Count:        []int{12}, Sum: []int{36}, Avg: []float64{5.5}, Min: []int{5}, Max: []string{"i11"},
			EmptyMax:             []int{},
			Counts:               []struct{ N, Total int }{{12, 66}},
			GroupBy:              []planGroup{{"p0", 4, 9, 4.5}, {"p1", 4, 10, 5.5}, {"p2", 4, 11, 6.5}},
			GroupByValue:         []string{"even", "odd"},
			Distinct:             []string{"even", "odd"},
			DistinctOrdered:      []string{"p0", "p1", "p2"},
			OffsetLimit:          []string{"i03", "i04", "i05", "i06"},
			OffsetLimitUnordered: 2,
			Top:                  []string{"i11", "i10", "i09"},
			OrderByPages:         []int{5, 5, 2},
			Pages:                []int{3, 3},
		}},
		{name: "ranges", want: ranges{
			FeedRanges: 5, PerRangeTotal: 30, RangesUsed: 4, ChangeFeed: 30,
			OrderBy: []int{29, 28, 27, 26, 25}, Count: []int{30}, Max: []int{29}, Groups: 10,
			Top: []int{0, 1, 2}, OffsetLimit: []int{28, 29}, ByKey: []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, Pinned: []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
			ReadAll: 30, Read: 7, OneToken: true, LSNs: true, SessionRanges: []string{"0", "1", "3", "4"},
		}},
		// issue 13.12: full-text search through @azure/cosmos, across
		// partitions: t1 has "mountain" twice and a bicycle; t0 alone has
		// both "red" and "bicycle".
		{name: "full-text-search", want: func() fullTextSearch {
			w := fullTextSearch{Contains: []string{"t0", "t1"}, ContainsAny: []string{"t2", "t3"},
				Rank: []string{"t1", "t0"}, RRF: []string{"t0"}}
			w.Policy.DefaultLanguage = "en-US"
			w.Policy.FullTextPaths = []struct{ Path, Language string }{{"/text", "en-US"}}
			return w
		}()},
		{name: "read-all", want: readAll{
			PageSizes:      []int{5, 5, 2},
			IDs:            []string{"i00", "i01", "i02", "i03", "i04", "i05", "i06", "i07", "i08", "i09", "i10", "i11"},
			PartitionPages: [][]string{{"i02", "i05", "i08"}, {"i11"}},
			All:            12,
		}},
		{name: "change-feed", want: func() changeFeed {
			w := changeFeed{
				Beginning:      feedRead{200, []string{"a", "b"}},
				Now:            feedRead{Status: 304},
				Partition:      feedRead{200, []string{"a"}},
				BeginningAgain: feedRead{Status: 304},
				// a was upserted: it comes again, once, with c and d.
				AfterWrites:          feedRead{200, []string{"a", "c", "d"}},
				NowAfterWrites:       []string{"a", "c", "d"},
				PartitionAfterWrites: []string{"a"},
				Resumed:              feedRead{200, []string{"e"}},
				ResumedAgain:         304,
				PagedSizes:           []int{2, 2, 1},
				LegacyContinued:      feedRead{200, []string{"e"}},
				LegacyNow:            304,
			}
			w.Legacy.Status, w.Legacy.IDs, w.Legacy.HasMore = 200, []string{"a", "e"}, true
			w.LegacyAgain.Status = 304
			return w
		}()},
		{name: "all-versions", want: allVersions{
			Beginning: 400, BeginningPartition: 400, Time: 400,
			Now: 304, PartitionNow: 304,
			All: avRead{Status: 200, Rows: []avRow{
				{Op: "create", ID: "x"}, {Op: "create", ID: "y"}, {Op: "replace", ID: "y"},
				{Op: "delete", ID: "y", TTLExpired: ptr(false)},
				{Op: "delete", ID: "x", TTLExpired: ptr(true)},
			}},
			Partition:  []avRow{{Op: "create", ID: "x"}, {Op: "delete", ID: "x", TTLExpired: ptr(true)}},
			Again:      304,
			Resumed:    5,
			PagedSizes: []int{1, 1, 1, 1, 1},
		}},
		{name: "ttl", want: ttl{
			Before: ttlLook{Read: 200, Query: []string{"forever", "short"}, CrossQuery: []int{2},
				ReadAll: []string{"forever", "short"}, ChangeFeed: []string{"forever", "short"}, LegacyChangeFeed: []string{"forever", "short"}},
			At59: 200,
			After: ttlLook{Read: 404, Query: []string{"forever"}, CrossQuery: []int{1},
				ReadAll: []string{"forever"}, ChangeFeed: []string{"forever"}, LegacyChangeFeed: []string{"forever"}},
			FeedFirst: []string{"forever", "short"},
			// An expiry is no change in the latest-version change feed.
			FeedAfter: feedRead{Status: 304},
		}},
		{name: "wrong-key", want: wrongKey{ReadDatabases: 401, CreateDatabase: 401}},
		// CO-8: the tokens serve what their permission grants until the
		// clock moves 600 s past their issue, then the service's 403. A
		// request the SDK has no token for (another container, the
		// database list) goes with "null" as its Authorization: a 401.
		{name: "resource-tokens", want: resourceTokens{
			Permissions: []string{"all", "read"}, ListedTokens: true,
			Create: 201, Read: 1, Upsert: 200, Query: []string{"x"},
			OtherContainer: 401, FeedRead: "o", FeedWrite: 403, Databases: 401,
			At599: 200, At600: 403, FeedAt600: 403, Renewed: 2,
		}},
		// issue 28.3: a container's uniqueKeyPolicy holds within a partition.
		{name: "unique-keys", want: uniqueKeys{First: 201, Duplicate: 409, UniqueMessage: true, OtherPartition: 201,
			Policy: uniquePolicy{UniqueKeys: []uniqueKey{{Paths: []string{"/email"}}}}}},
		{name: "scripts", want: scripts{IDs: []string{"a1", "a2"}, Thrown: 400, AfterThrow: []string{},
			UpperID: "LOW", Doubled: []float64{6}, Sprocs: []string{"two"}}},
		{name: "https", want: https{Read: 1, Query: []int{1}, UntrustedError: "DEPTH_ZERO_SELF_SIGNED_CERT"},
			check: func(t *testing.T, f *fixture, line []byte) {
				// The PEM node trusted is the one the server serves; the
				// JS SDK keeps to its own endpoint with the emulator's
				// account ("localhost"), whose regions it leaves out.
				var got struct {
					PemSHA256         string
					WritableLocations []string
				}
				if err := json.Unmarshal(line, &got); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(f.certPEM)
				if got.PemSHA256 != hex.EncodeToString(sum[:]) {
					t.Errorf("node fetched a PEM with SHA-256 %s, not the server's certificate", got.PemSHA256)
				}
				if d := cmp.Diff([]string{}, got.WritableLocations); d != "" {
					t.Errorf("writableLocations (-want +got):\n%s", d)
				}
			}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			f := MustServer(t)
			line := runJSScenario(t, node, f, sc.name)
			got := newOf(sc.want)
			if err := json.Unmarshal(line, got); err != nil {
				t.Fatalf("decoding %s: %v", line, err)
			}
			if diff := cmp.Diff(sc.want, derefAny(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scenario %s (-want +got):\n%s\nline: %s", sc.name, diff, line)
			}
			if sc.check != nil {
				sc.check(t, f, line)
			}
		})
	}
}

// issue 26.5: the JS SDK asks for an item whose id has a '?' with the '?'
// as it is in the path (encodeURI), and signs the id; each id the
// service's gateway routes is created (201), read (200), replaced (200,
// read back as v 2), deleted (204) and gone (404), and each it takes on
// create but cannot route gets its status on read, replace and delete.
func TestIssue26_5_ItemIDsThroughJSSDK(t *testing.T) {
	node := clienttest.Node(t, jsDir, "@azure/cosmos")
	f := MustServer(t)
	type result struct {
		Routable   map[string][]int
		Unroutable map[string][]int
		Longest    []int
		TooLong    int
	}
	line := runJSScenario(t, node, f, "item-ids")
	var got result
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("decoding %s: %v", line, err)
	}
	ok := []int{201, 200, 200, 2, 204, 404}
	want := result{Routable: map[string][]int{}, Longest: ok, TooLong: 400,
		Unroutable: map[string][]int{
			"Test ":      {201, 401, 401, 401},
			"Escaped%20": {201, 401, 401, 401},
			"With\tTab":  {201, 400, 400, 400},
			// node sends ".../docs/trail": the empty query is dropped.
			"trail?": {201, 401, 401, 401},
		}}
	for _, id := range []string{"a?b", "?lead", "q?x&y=z+w%", "50% off", "with space", "plus+sign",
		"a=b&c=d", "semi;colon", "ü-nicode 鱀", "WithAllowedSpecial,=.:~+-@()^${}[]!_Chars"} {
		want.Routable[id] = ok
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("item ids (-want +got):\n%s", d)
	}
}

// issue 26.7: the JS SDK reads the account's default consistency level
// (getDatabaseAccount), Session unless the server is told otherwise, and a
// read that asks for a stronger level, per request or as its client's
// level, gets the service's 400; the account read itself is served.
func TestIssue26_7_ConsistencyThroughJSSDK(t *testing.T) {
	node := clienttest.Node(t, jsDir, "@azure/cosmos")
	type result struct {
		DefaultConsistencyLevel string
		PerRequest, PerClient   map[string]int
	}
	for _, tc := range []struct {
		config string
		want   result
	}{
		{"", result{"Session",
			map[string]int{"Strong": 400, "BoundedStaleness": 400, "Session": 200, "ConsistentPrefix": 200, "Eventual": 200},
			map[string]int{"Strong": 400, "BoundedStaleness": 400, "Session": 200, "ConsistentPrefix": 200, "Eventual": 200}}},
		{"Strong", result{"Strong",
			map[string]int{"Strong": 200, "BoundedStaleness": 200, "Session": 200, "ConsistentPrefix": 200, "Eventual": 200},
			map[string]int{"Strong": 200, "BoundedStaleness": 200, "Session": 200, "ConsistentPrefix": 200, "Eventual": 200}}},
	} {
		t.Run(tc.want.DefaultConsistencyLevel, func(t *testing.T) {
			f := MustServerWith(t, func(c *cosmos.Config) { c.DefaultConsistencyLevel = tc.config })
			line := runJSScenario(t, node, f, "consistency")
			var got result
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatalf("decoding %s: %v", line, err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("consistency (-want +got):\n%s", d)
			}
		})
	}
}

package cosmos_test

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// The current azure-cosmos 4.x for Python (requirements.txt) against the
// server: each scenario of testdata/python4/scenarios.py runs against a
// fresh server and prints one JSON line, checked here (issue 26).

func runPython4Scenario(t *testing.T, name string) []byte {
	t.Helper()
	return runPython4ScenarioOn(t, MustServer(t), name)
}

// runPython4ScenarioOn runs a scenario against f.
func runPython4ScenarioOn(t *testing.T, f *fixture, name string) []byte {
	t.Helper()
	python := clienttest.PythonSDK(t, "import azure.cosmos; assert azure.cosmos.__version__.startswith('4.')")
	env := []string{"COSMOS_ENDPOINT=" + f.endpoint, "COSMOS_KEY=" + cosmos.EmulatorKey}
	stdout, _ := runProgram(t, f, "testdata/python4", env, python, "scenarios.py", name)
	return scenarioLine(t, name, stdout)
}

func TestPython4Client_CRUD(t *testing.T) {
	type crud struct {
		Read, ReadOtherPartition, CreateDuplicate, Replaced, ReadDeleted int
		Partition                                                        []string
	}
	checkLine(t, runPython4Scenario(t, "crud"), crud{
		Read: 4, ReadOtherPartition: 404, CreateDuplicate: 409, Replaced: 40, ReadDeleted: 404,
		Partition: []string{"i01", "i04", "i07", "i10", "new"},
	})
}

// Issue 26.2: several partition key ranges, as the Python SDK sees them.
func TestIssue26_2_Python4Ranges(t *testing.T) {
	type ranges struct {
		FeedRanges, PerRange, RangesUsed int
		OrderBy, Count, Min, Top         []int
		Distinct                         int
		OffsetLimit                      []int
		All                              int
	}
	checkLine(t, runPython4Scenario(t, "ranges"), ranges{
		FeedRanges: 5, PerRange: 30, RangesUsed: 5,
		OrderBy: []int{29, 28, 27, 26, 25}, Count: []int{30}, Min: []int{0}, Top: []int{0, 1, 2},
		Distinct: 10, OffsetLimit: []int{28, 29}, All: 30,
	})
}

// Issue 26.1: the SDK runs these through its own pipeline: the gateway
// refuses them with their plan (substatus 1004), and the SDK reads the
// partition key ranges feed until it is told nothing changed (304).
func TestIssue26_1_Python4CrossPartitionQueries(t *testing.T) {
	type queries struct {
		OrderBy, OrderByTwo []string
		Count, Sum          []int
		Avg                 []float64
		Min                 []int
		Max                 []string
		Distinct            []string
		OffsetLimit, Top    []string
		Params              []string
		Pages               []int
		GroupBy             int
	}
	checkLine(t, runPython4Scenario(t, "queries"), queries{
		OrderBy:    []string{"i11", "i10", "i09", "i08", "i07", "i06", "i05", "i04", "i03", "i02", "i01", "i00"},
		OrderByTwo: []string{"i10", "i08", "i06", "i04", "i02", "i00", "i11", "i09", "i07", "i05", "i03", "i01"},
		Count:      []int{12}, Sum: []int{36}, Avg: []float64{5.5}, Min: []int{5}, Max: []string{"i11"},
		Distinct:    []string{"even", "odd"},
		OffsetLimit: []string{"i03", "i04", "i05", "i06"},
		Top:         []string{"i11", "i10", "i09"},
		Params:      []string{"i10", "i11"},
		Pages:       []int{3, 3},
		GroupBy:     400,
	})
}

// Issue 26: a query refused for crossing partitions without leave reaches
// the caller as a 400; a point read names its range
// (x-ms-documentdb-partitionkeyrangeid), and the SDK's cache of the
// container's ranges outlives it (without the header the SDK dropped it);
// a transactional batch answers with the LSN after the one before it.
func TestIssue26_Python4GatewayAnswers(t *testing.T) {
	type gateway struct {
		CrossPartitionDisabled, ConflictsDisabled int
		CrossPartitionAllowed, OnePartition       int
		ReadRange                                 string
		RangesCached                              int
		BatchLSN                                  int
	}
	checkLine(t, runPython4Scenario(t, "gateway"), gateway{
		CrossPartitionDisabled: 400, ConflictsDisabled: 400,
		CrossPartitionAllowed: 13, OnePartition: 5,
		ReadRange: "0", RangesCached: 1, BatchLSN: 1,
	})
}

// The change feed in all-versions-and-deletes mode through azure-cosmos
// 4.x (query_items_change_feed(mode="AllVersionsAndDeletes")): from now
// on, every create, replace and delete once, in order, and an expiry as a
// delete whose metadata says timeToLiveExpired, at the instant it expired
// on lapse's clock (CO-6, CO-9), for the whole
// container, one partition key and one feed range. The LSNs of the
// changes are distinct, so the whole feed can be sorted by them.
func TestIssue26_Python4AllVersionsAndDeletes(t *testing.T) {
	type change struct {
		Op               string
		ID               string
		V                *int
		PK               map[string]string
		TTLExpired       *bool
		Current          map[string]any
		LsnIsDocs        bool
		HasCrts          bool
		PreviousImageLSN *uint64
		Lsn              uint64
	}
	type allVersions struct {
		Whole, Partition, Range []change
		PInRange                bool
		Again                   int
		ExpiredAfter            []int64
	}
	var got allVersions
	if err := json.Unmarshal(runPython4Scenario(t, "all-versions"), &got); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	one, two := 1, 2
	lsn := func(n uint64) *uint64 { return &n }
	// The LSNs: a 1, b 2, a's new version 3, a's delete 4 (bumpLSN);
	// b's expiry has the LSN the container's next write would take, 5.
	createA := change{Op: "create", ID: "a", V: &one, LsnIsDocs: true, HasCrts: true, Lsn: 1}
	createB := change{Op: "create", ID: "b", V: &one, LsnIsDocs: true, HasCrts: true, Lsn: 2}
	replaceA := change{Op: "replace", ID: "a", V: &two, LsnIsDocs: true, HasCrts: true, PreviousImageLSN: lsn(1), Lsn: 3}
	deleteA := change{Op: "delete", ID: "a", PK: map[string]string{"pk": "p"}, TTLExpired: &no, Current: map[string]any{},
		HasCrts: true, PreviousImageLSN: lsn(3), Lsn: 4}
	expireB := change{Op: "delete", ID: "b", PK: map[string]string{"pk": "q"}, TTLExpired: &yes, Current: map[string]any{},
		HasCrts: true, PreviousImageLSN: lsn(2), Lsn: 5}
	want := allVersions{
		Whole:     []change{createA, createB, replaceA, deleteA, expireB},
		Partition: []change{createA, replaceA, deleteA},
		Range:     []change{createB, expireB},
		// rule: CO-9 (b had a TTL of 60 s and the clock moved 90 s: its
		// expiry is listed at its _ts + 60, the instant it expired)
		ExpiredAfter: []int64{60},
	}
	if got.PInRange {
		t.Fatal("keys p and q share a feed range: the scenario cannot tell a feed range's scope")
	}
	// The SDK reads the container's feed ranges one after the other: the
	// whole feed is in order within each range, and in LSN order once sorted.
	sort.SliceStable(got.Whole, func(i, j int) bool { return got.Whole[i].Lsn < got.Whole[j].Lsn })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("all-versions-and-deletes feed (-want +got):\n%s", d)
	}
}

// Issue 28.1 through azure-cosmos 4.x (container.scripts): a procedure's
// writes commit together, and none of them when it throws; its console
// output comes back when asked for; a pre-trigger changes the item it
// runs for, one that throws refuses the write; a UDF runs in a query.
func TestIssue28_1_Python4Scripts(t *testing.T) {
	type scripts struct {
		Executed      map[string]int
		Log           string
		Failed        int
		AfterSprocs   []string
		Sprocs        []string
		Stamped       bool
		Refused       int
		AfterTriggers []string
		UDF           []float64
	}
	checkLine(t, runPython4Scenario(t, "scripts"), scripts{
		Executed: map[string]int{"created": 3}, Log: "created 3",
		Failed: 400, AfterSprocs: []string{"x1", "x2", "x3"}, Sprocs: []string{"createAll", "writeThenFail"},
		Stamped: true, Refused: 400, AfterTriggers: []string{"t1"},
		UDF: []float64{2, 4, 6},
	})
}

// Issue 28.2 through azure-cosmos 4.x: a client whose credential is a
// resource token ({link: token}) may do what its permission allows on its
// container and no more, and is refused once lapse's clock has moved past
// the token's hour (CO-8).
func TestIssue28_2_Python4ResourceTokens(t *testing.T) {
	type tokens struct {
		Tokens, Read, Query, WriteReadOnly, ReadOther, WriteAll, ReadAll, ReadExpired, WriteExpired int
	}
	checkLine(t, runPython4Scenario(t, "tokens"), tokens{
		Tokens: 2, Read: 1, Query: 1, WriteReadOnly: 403, ReadOther: 403, WriteAll: 0, ReadAll: 3,
		// rule: CO-8
		ReadExpired: 403, WriteExpired: 403,
	})
}

// Issue 28.3 through azure-cosmos 4.x: the unique key policy is kept, a
// duplicate in the same partition key is refused with 409 (a create and an
// upsert), another partition key takes it, a replace frees the old value
// and an item's expiry frees its value at once (CO-1).
func TestIssue28_3_Python4UniqueKeys(t *testing.T) {
	type uniqueKeys struct {
		Policy                                                                              []string
		Duplicate, OtherPartition, UpsertDuplicate, AfterReplace, BeforeExpiry, AfterExpiry int
		IDs                                                                                 []string
	}
	checkLine(t, runPython4Scenario(t, "unique-keys"), uniqueKeys{
		Policy:    []string{"/email"},
		Duplicate: 409, OtherPartition: 0, UpsertDuplicate: 409, AfterReplace: 0,
		BeforeExpiry: 409, AfterExpiry: 0, IDs: []string{"a", "b", "f"},
	})
}

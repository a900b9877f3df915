package cosmos_test

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// The Java SDK (azure-cosmos 4.x, gateway mode) against the server: each
// scenario of testdata/java (lapse.Scenarios) runs against a fresh server
// and prints one JSON line, checked here (issue 26).

// javaDir is the Maven project of the Java scenarios.
const javaDir = "testdata/java"

func runJavaScenario(t *testing.T, name string) []byte {
	t.Helper()
	java, cp := clienttest.Java(t, javaDir)
	f := MustServer(t)
	// The Java SDK talks HTTPS only; its emulator switch trusts the
	// emulator's certificate (lapse's here) at the host it names.
	env := []string{"COSMOS_ENDPOINT=" + f.endpoint, "COSMOS_KEY=" + cosmos.EmulatorKey,
		"COSMOS_EMULATOR_HOST=127.0.0.1", "COSMOS_EMULATOR_SERVER_CERTIFICATE_VALIDATION_DISABLED=true"}
	stdout, _ := runProgram(t, f, javaDir, env, java, "-cp", cp, "lapse.Scenarios", name)
	return scenarioLine(t, name, stdout)
}

func TestJavaClient_CRUD(t *testing.T) {
	type crud struct {
		Read, ReadOtherPartition, CreateDuplicate, Replaced, ReadDeleted int
		Partition                                                        []string
	}
	checkLine(t, runJavaScenario(t, "crud"), crud{
		Read: 4, ReadOtherPartition: 404, CreateDuplicate: 409, Replaced: 40, ReadDeleted: 404,
		Partition: []string{"i01", "i04", "i07", "i10", "new"},
	})
}

// Issue 26.1: the Java SDK runs cross-partition queries in its own
// pipeline, from the plan the gateway gives.
func TestIssue26_1_JavaCrossPartitionQueries(t *testing.T) {
	type queries struct {
		OrderBy           []string
		Count             []int
		Sum, Avg          []float64 // the SDK sums in doubles
		Min               []int
		Max               []string
		GroupBy, Distinct int
		OffsetLimit, Top  []string
		Params            []string
		Pages             []int
	}
	checkLine(t, runJavaScenario(t, "queries"), queries{
		OrderBy: []string{"i11", "i10", "i09", "i08", "i07", "i06", "i05", "i04", "i03", "i02", "i01", "i00"},
		Count:   []int{12}, Sum: []float64{36}, Avg: []float64{5.5}, Min: []int{5}, Max: []string{"i11"},
		GroupBy: 3, Distinct: 2,
		OffsetLimit: []string{"i03", "i04", "i05", "i06"},
		Top:         []string{"i11", "i10", "i09"},
		Params:      []string{"i10", "i11"},
		Pages:       []int{3, 3},
	})
}

// Issue 26.2: several partition key ranges, as the Java SDK sees them.
func TestIssue26_2_JavaRanges(t *testing.T) {
	type ranges struct {
		FeedRanges, PerRange, RangesUsed int
		OrderBy, Count, Top, OffsetLimit []int
		Groups, All                      int
	}
	checkLine(t, runJavaScenario(t, "ranges"), ranges{
		// its container's definition has no version: version 1 keys, of
		// which these fill four ranges of five
		FeedRanges: 5, PerRange: 30, RangesUsed: 4,
		OrderBy: []int{29, 28, 27, 26, 25}, Count: []int{30}, Top: []int{0, 1, 2}, OffsetLimit: []int{28, 29},
		Groups: 10, All: 30,
	})
}

// The change feed in all-versions-and-deletes mode through the Java SDK
// (CosmosChangeFeedRequestOptions...allVersionsAndDeletes(), read as
// ChangeFeedProcessorItem): from now on, every create, replace and delete
// once, in order, with their LSNs, and an expiry as a delete marked
// timeToLiveExpired at the instant it expired on lapse's clock (CO-6,
// CO-9), for the whole container and one partition key.
func TestIssue28_4_JavaAllVersionsAndDeletes(t *testing.T) {
	type change struct {
		Op          string
		ID          string
		I           int
		LsnIsDocs   bool
		TTLExpired  *bool
		Lsn         uint64
		PreviousLsn uint64
	}
	type allVersions struct {
		Whole, Partition []change
		ExpiredAfter     []int64
		Again            int
	}
	yes, no := true, false
	// The LSNs: a 1, b 2, a's new version 3, a's delete 4; b's expiry has
	// the LSN the container's next write would take, 5.
	createA := change{Op: "CREATE", ID: "a", I: 1, LsnIsDocs: true, Lsn: 1}
	createB := change{Op: "CREATE", ID: "b", I: 1, LsnIsDocs: true, Lsn: 2}
	replaceA := change{Op: "REPLACE", ID: "a", I: 2, LsnIsDocs: true, Lsn: 3, PreviousLsn: 1}
	deleteA := change{Op: "DELETE", ID: "a", TTLExpired: &no, Lsn: 4, PreviousLsn: 3}
	expireB := change{Op: "DELETE", ID: "b", TTLExpired: &yes, Lsn: 5, PreviousLsn: 2}
	want := allVersions{
		Whole:     []change{createA, createB, replaceA, deleteA, expireB},
		Partition: []change{createA, replaceA, deleteA},
		// rule: CO-9 (b had a TTL of 60 s and the clock moved 90 s)
		ExpiredAfter: []int64{60},
	}
	var got allVersions
	if err := json.Unmarshal(runJavaScenario(t, "allVersions"), &got); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(got.Whole, func(i, j int) bool { return got.Whole[i].Lsn < got.Whole[j].Lsn })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("all-versions-and-deletes feed through the Java SDK (-want +got):\n%s", d)
	}
}

// Issue 28.1: stored procedures, triggers and user-defined functions
// through the Java SDK's CosmosScripts: a procedure's writes commit
// together, and none of them when it throws; its console output comes back
// when asked for; a pre-trigger changes the item it runs for, one that
// throws refuses the write; a UDF runs in a query.
func TestIssue28_1_JavaScripts(t *testing.T) {
	type scripts struct {
		Executed      map[string]int
		Log           string
		Failed        int
		AfterSprocs   []string
		Stamped       bool
		Refused       int
		AfterTriggers []string
		UDF           []float64
	}
	checkLine(t, runJavaScenario(t, "scripts"), scripts{
		Executed: map[string]int{"created": 3}, Log: "created 3",
		Failed: 400, AfterSprocs: []string{"x1", "x2", "x3"},
		Stamped: true, Refused: 400, AfterTriggers: []string{"t1"},
		UDF: []float64{2, 4, 6},
	})
}

// Issue 28.2: a Java client signed with a resource token may do what its
// permission allows on its container and no more, and is refused once
// lapse's clock has moved past the token's hour (CO-8).
func TestIssue28_2_JavaResourceTokens(t *testing.T) {
	type tokens struct {
		Tokens, Read, Query, WriteReadOnly, ReadOther, WriteAll, ReadAll, ReadExpired, WriteExpired int
	}
	checkLine(t, runJavaScenario(t, "tokens"), tokens{
		Tokens: 2, Read: 1, Query: 1, WriteReadOnly: 403, ReadOther: 403, WriteAll: 201, ReadAll: 3,
		// rule: CO-8
		ReadExpired: 403, WriteExpired: 403,
	})
}

// Issue 28.3: a unique key policy through the Java SDK: a duplicate in the
// same partition key is refused with 409 (a create and an upsert), another
// partition key takes it, a replace frees the old value and an item's
// expiry frees its value at once (CO-1).
func TestIssue28_3_JavaUniqueKeys(t *testing.T) {
	type uniqueKeys struct {
		Duplicate, OtherPartition, UpsertDuplicate, AfterReplace, BeforeExpiry, AfterExpiry int
		IDs                                                                                 []string
	}
	checkLine(t, runJavaScenario(t, "uniqueKeys"), uniqueKeys{
		Duplicate: 409, OtherPartition: 201, UpsertDuplicate: 409, AfterReplace: 201,
		BeforeExpiry: 409, AfterExpiry: 201, IDs: []string{"a", "b", "f"},
	})
}

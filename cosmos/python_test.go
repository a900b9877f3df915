package cosmos_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// Debian's azure-cosmos 3.1.1 (python3-azure-cosmos) against the server:
// each scenario of testdata/python/scenarios.py runs against a fresh
// server on a frozen clock and prints one JSON line, checked here.

// pythonDir holds the Python scenarios.
const pythonDir = "testdata/python"

// runPythonScenario runs one scenario of scenarios.py against endpoint
// (f's, over HTTPS or not), with env added, and returns its JSON line.
func runPythonScenario(t *testing.T, python string, f *fixture, endpoint, name string, env ...string) []byte {
	t.Helper()
	env = append(env, "COSMOS_ENDPOINT="+endpoint, "COSMOS_KEY="+cosmos.EmulatorKey)
	stdout, _ := runProgram(t, f, pythonDir, env, python, "scenarios.py", name)
	return scenarioLine(t, name, stdout)
}

// checkLine decodes line into a value of want's type and compares.
func checkLine(t *testing.T, line []byte, want any) {
	t.Helper()
	got := newOf(want)
	if err := json.Unmarshal(line, got); err != nil {
		t.Fatalf("decoding %s: %v", line, err)
	}
	if d := cmp.Diff(want, derefAny(got)); d != "" {
		t.Errorf("(-want +got):\n%s\nline: %s", d, line)
	}
}

func TestPythonClient_CRUD(t *testing.T) {
	// issue 13 (Python clients): databases, containers and items through
	// azure-cosmos 3.x, which sends every path with a doubled slash (13.9).
	python := clienttest.Python(t, "azure.cosmos")
	f := MustServer(t)
	type status struct {
		V       int
		Same    bool `json:"sameEtag"`
		NewEtag bool
	}
	type crud struct {
		CreateDatabaseDuplicate int
		ReadDatabase            string
		Databases               []string
		QueryDatabases          []string
		ReadContainer           []string
		ReplacedDefaultTTL      int `json:"replacedDefaultTtl"`
		Containers              []string
		CreateItemDuplicate     int
		ReadItem                status
		ReadOtherPartition      int
		ReplaceItem             status
		ReplaceStale            int
		UpsertNew               int
		UpsertExisting          int
		QueryPartition          []string
		QueryCross              []string
		ReadAll                 []string
		ReadDeletedItem         int
		ReadDeletedContainer    int
		ReadDeletedDatabase     int
	}
	line := runPythonScenario(t, python, f, f.endpoint, "crud")
	checkLine(t, line, crud{
		CreateDatabaseDuplicate: 409, ReadDatabase: "crud", Databases: []string{"crud"}, QueryDatabases: []string{"crud"},
		ReadContainer: []string{"/pk"}, ReplacedDefaultTTL: 3600, Containers: []string{"items"},
		CreateItemDuplicate: 409, ReadItem: status{V: 1, Same: true}, ReadOtherPartition: 404,
		ReplaceItem: status{V: 2, NewEtag: true}, ReplaceStale: 412, UpsertNew: 3, UpsertExisting: 4,
		QueryPartition: []string{"a", "c"}, QueryCross: []string{"a", "c"}, ReadAll: []string{"a", "b", "c"},
		ReadDeletedItem: 404, ReadDeletedContainer: 404, ReadDeletedDatabase: 404,
	})
}

func TestPythonClient_CrossPartitionQueryReadsEveryPage(t *testing.T) {
	// issue 13.10: azure-cosmos 3.x reads x-ms-continuation from a plain
	// dict; with the header under another case it stopped after the first
	// page (100 of 150 items) without an error.
	python := clienttest.Python(t, "azure.cosmos")
	f := MustServer(t)
	type paged struct {
		Pages           []int
		Count, Distinct int
	}
	line := runPythonScenario(t, python, f, f.endpoint, "paged-query")
	checkLine(t, line, paged{Pages: []int{100, 50}, Count: 150, Distinct: 150})
}

func TestPythonClient_DefaultTTLExpiresItemsOnTheMovedClock(t *testing.T) {
	// CO-4, CO-6 with azure-cosmos 3.x: an item of a container with
	// defaultTtl 60 is read at 59 s and gone at 61 s, from point reads and
	// queries, as the test moves the server's clock; ttl -1 keeps one.
	python := clienttest.Python(t, "azure.cosmos")
	f := MustServer(t)
	type ttl struct {
		Before, After      []string
		ReadAt59, ReadAt61 int
		ReadForever        string
	}
	line := runPythonScenario(t, python, f, f.endpoint, "ttl")
	checkLine(t, line, ttl{Before: []string{"forever", "short"}, After: []string{"forever"},
		ReadAt59: 0, ReadAt61: 404, ReadForever: "forever"})
}

func TestPythonClient_HTTPSWithTheDownloadedCertificate(t *testing.T) {
	// issue 13 (Python clients over HTTPS): the certificate downloaded from
	// /_explorer/emulator.pem, trusted through REQUESTS_CA_BUNDLE. The SDK
	// does not verify certificates of localhost or 127.0.0.1 at all, so the
	// server listens on 127.0.0.2, where it does.
	python := clienttest.Python(t, "azure.cosmos")
	f := MustServerAt(t, "127.0.0.2")
	bundle := MustCertFile(t, f)
	type https struct {
		Untrusted string
		Read      int
		Query     []string
	}
	endpoint := "https://" + f.s.Addr().String() + "/"
	line := runPythonScenario(t, python, f, endpoint, "https", "REQUESTS_CA_BUNDLE="+bundle)
	checkLine(t, line, https{Untrusted: "SSLError", Read: 1, Query: []string{"a"}})
}

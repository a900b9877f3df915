package cosmos_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// lapse's own programs of the flows of Microsoft's Cosmos DB for NoSQL
// quickstarts (testdata/quickstart; docs/examples.md names each), run
// against the server with its endpoint and key in COSMOS_ENDPOINT and
// COSMOS_KEY, over HTTPS with the certificate trusted as each SDK's users
// trust the emulator's.

// quickstartDir holds the programs.
const quickstartDir = "testdata/quickstart"

// MustCertFile downloads the server's certificate from
// /_explorer/emulator.pem, as a user does, into a file and returns its
// path.
func MustCertFile(tb testing.TB, f *fixture) string {
	tb.Helper()
	resp, err := f.http.Get(f.endpoint + "_explorer/emulator.pem")
	if err != nil {
		tb.Fatal(err)
	}
	pem, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /_explorer/emulator.pem: %d %v", resp.StatusCode, err)
	}
	path := filepath.Join(tb.TempDir(), "emulator.pem")
	if err := os.WriteFile(path, pem, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// localhostEndpoint is f's HTTPS endpoint under the name the tutorials
// give the emulator, localhost.
func localhostEndpoint(f *fixture) string {
	_, port, _ := net.SplitHostPort(f.s.Addr().String())
	return "https://localhost:" + port + "/"
}

func TestQuickstartGo(t *testing.T) {
	// issue 13 (quickstarts): the Go program (azcosmos, account key), the
	// certificate in SSL_CERT_FILE, where Go on Linux reads trusted
	// certificates from.
	f := MustServer(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "books")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./"+quickstartDir+"/go").CombinedOutput(); err != nil {
		t.Fatalf("go build the program: %v\n%s", err, out)
	}
	env := []string{"COSMOS_ENDPOINT=" + localhostEndpoint(f), "COSMOS_KEY=" + cosmos.EmulatorKey, "SSL_CERT_FILE=" + MustCertFile(t, f)}
	want := `database library: created
container books: created
created b1: 201
read b1: 200, "Leaves of Grass" (1855) on shelf poetry
deleted b1: 204
`
	stdout, _ := runProgram(t, f, ".", env, bin)
	if diff := cmp.Diff(want, string(stdout)); diff != "" {
		t.Errorf("first run printed (-want +got):\n%s", diff)
	}
	// A second run finds the database and the container there.
	want = strings.ReplaceAll(want, ": created\n", ": already there\n")
	stdout, _ = runProgram(t, f, ".", env, bin)
	if diff := cmp.Diff(want, string(stdout)); diff != "" {
		t.Errorf("second run printed (-want +got):\n%s", diff)
	}
}

func TestQuickstartJS(t *testing.T) {
	// issue 13 (quickstarts): the Node.js program (@azure/cosmos from
	// jstest's node_modules, account key), the certificate in
	// NODE_EXTRA_CA_CERTS.
	node := clienttest.Node(t, jsDir, "@azure/cosmos")
	modules, err := filepath.Abs(filepath.Join(jsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	f := MustServer(t)
	stdout, _ := runProgram(t, f, quickstartDir, []string{"NODE_PATH=" + modules, "COSMOS_ENDPOINT=" + localhostEndpoint(f),
		"COSMOS_KEY=" + cosmos.EmulatorKey, "NODE_EXTRA_CA_CERTS=" + MustCertFile(t, f)}, node, "plants.js")
	want := `ready: garden/plants
created p1 (rosemary): 201
created p2 (basil): 201
created p3 (thyme): 201
read p1: rosemary, 60 cm, north bed
south bed, page 1: p2 basil
south bed, page 2: p3 thyme
deleted p3: 204
`
	if diff := cmp.Diff(want, string(stdout)); diff != "" {
		t.Errorf("plants.js printed (-want +got):\n%s", diff)
	}
}

func TestQuickstartPython(t *testing.T) {
	// issue 13 (quickstarts): the azure-cosmos 3.x program. It addresses
	// the container by _self links, makes it without a partition key and
	// queries it across partitions two items a page; the SDK does not
	// check certificates of localhost.
	python := clienttest.Python(t, "azure.cosmos")
	f := MustServer(t)
	stdout, _ := runProgram(t, f, quickstartDir, []string{"COSMOS_ENDPOINT=" + localhostEndpoint(f),
		"COSMOS_KEY=" + cosmos.EmulatorKey}, python, "sightings.py")
	if got, want := string(stdout), "page: s1 Mars, s2 Jupiter\npage: s3 Saturn\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

// quickstartGear is what the programs of the Python and Java quickstarts'
// flow print.
const quickstartGear = `ready: outfitter/gear
upserted g1 (ridge tent)
upserted g2 (canister stove)
upserted g3 (wood stove)
read g1: ridge tent, 4 left
stoves, page 1: g2 canister stove
stoves, page 2: g3 wood stove
`

func TestQuickstartPython4(t *testing.T) {
	// issue 26: the azure-cosmos 4.x program, over HTTPS with the
	// emulator's certificate trusted as the quickstart's users trust it.
	python := clienttest.PythonSDK(t, "import azure.cosmos; assert azure.cosmos.__version__.startswith('4.')")
	f := MustServer(t)
	stdout, _ := runProgram(t, f, quickstartDir, []string{"COSMOS_ENDPOINT=" + localhostEndpoint(f),
		"COSMOS_KEY=" + cosmos.EmulatorKey, "REQUESTS_CA_BUNDLE=" + MustCertFile(t, f)}, python, "gear.py")
	if diff := cmp.Diff(quickstartGear, string(stdout)); diff != "" {
		t.Errorf("gear.py printed (-want +got):\n%s", diff)
	}
}

func TestQuickstartJava(t *testing.T) {
	// issue 26: the Java SDK's program, in gateway mode, over HTTPS with
	// the SDK's emulator switch trusting the emulator's certificate.
	java, cp := clienttest.Java(t, javaDir)
	f := MustServer(t)
	stdout, _ := runProgram(t, f, javaDir, []string{"COSMOS_ENDPOINT=" + localhostEndpoint(f), "COSMOS_KEY=" + cosmos.EmulatorKey,
		"COSMOS_EMULATOR_SERVER_CERTIFICATE_VALIDATION_DISABLED=true"}, java, "-cp", cp, "lapse.Quickstart")
	if diff := cmp.Diff(quickstartGear, string(stdout)); diff != "" {
		t.Errorf("lapse.Quickstart printed (-want +got):\n%s", diff)
	}
}

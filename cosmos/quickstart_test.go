package cosmos_test

import (
	"context"
	"fmt"
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

	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/cosmos"
)

// Microsoft's Cosmos DB for NoSQL quickstarts, kept as the tutorials give
// them in testdata/quickstart (each file names its tutorial), run against
// the server with nothing changed but the endpoint and key, over HTTPS
// with the certificate trusted as each tutorial's users trust the
// emulator's.

// quickstartDir holds the quickstart programs.
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

// wantLines fails the test for each of want that is not a line of out.
func wantLines(t *testing.T, what string, out []byte, want ...string) {
	t.Helper()
	lines := map[string]bool{}
	for l := range strings.SplitSeq(string(out), "\n") {
		lines[strings.TrimRight(l, "\r")] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("%s has no line %q:\n%s", what, w, out)
		}
	}
}

func TestQuickstartGo(t *testing.T) {
	// issue 13 (quickstarts): the Go quickstart (azcosmos, account key),
	// with AZURE_COSMOS_ENDPOINT and AZURE_COSMOS_KEY set as it asks, and
	// the certificate in SSL_CERT_FILE, where Go on Linux reads trusted
	// certificates from.
	f := MustServer(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "quickstart")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./"+quickstartDir+"/go").CombinedOutput(); err != nil {
		t.Fatalf("go build the quickstart: %v\n%s", err, out)
	}
	stdout, stderr := runProgram(t, f, ".", []string{"AZURE_COSMOS_ENDPOINT=" + localhostEndpoint(f),
		"AZURE_COSMOS_KEY=" + cosmos.EmulatorKey, "SSL_CERT_FILE=" + MustCertFile(t, f)}, bin)
	wantLines(t, "stdout", stdout, "Read item with customerId 1", `    "EmailAddress": "luke12@adventure-works.com",`)
	for _, w := range []string{"Database [adventureworks] created", "Container [customer] created",
		"Status 201. Item {[1]} created", "Status 200. Item {[1]} read", "Status 204. Item {[1]} deleted"} {
		if !strings.Contains(string(stderr), w) {
			t.Errorf("the log has no %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(string(stderr), "failed") {
		t.Errorf("a step failed:\n%s", stderr)
	}
}

func TestQuickstartJS(t *testing.T) {
	// issue 13 (quickstarts): the Node.js quickstart (@azure/cosmos,
	// account key from COSMOS_ENDPOINT and COSMOS_KEY), the certificate in
	// NODE_EXTRA_CA_CERTS.
	dir := filepath.Join(quickstartDir, "js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@azure", "cosmos", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("the JS quickstart needs node and %s/node_modules (run `npm ci --prefix cosmos/%s`): %v", dir, dir, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	f := MustServer(t)
	stdout, _ := runProgram(t, f, dir, []string{"COSMOS_ENDPOINT=" + localhostEndpoint(f),
		"COSMOS_KEY=" + cosmos.EmulatorKey, "NODE_EXTRA_CA_CERTS=" + MustCertFile(t, f)}, node, "index.js")
	wantLines(t, "stdout", stdout,
		"'Touring-1000 Blue, 50' inserted", "'Touring-1000 Blue, 46' inserted", "'Mountain-200 Black, 42' inserted",
		"Touring-1000 Blue, 50 read",
		"0F124781-C991-48A9-ACF2-249771D44029: Mountain-200 Black, 42, BK-M68B-42",
		"0F124781-C991-48A9-ACF2-249771D44029 Item deleted")
	if !strings.Contains(string(stdout), " database ready\n") || !strings.Contains(string(stdout), " container ready\n") {
		t.Errorf("no database or container made:\n%s", stdout)
	}
}

func TestQuickstartPython(t *testing.T) {
	// issue 13 (quickstarts): the azure-cosmos 3.x getting-started program
	// (CosmosGetStarted.py), with its config's ENDPOINT and PRIMARYKEY
	// filled in. It addresses the container by _self links, makes it
	// without a partition key and queries it across partitions two items a
	// page; the SDK does not check certificates of localhost.
	python := clienttest.Python(t, "azure.cosmos")
	f := MustServer(t)
	src, err := os.ReadFile(filepath.Join(quickstartDir, "python", "CosmosGetStarted.py"))
	if err != nil {
		t.Fatal(err)
	}
	program := strings.Replace(string(src), "'ENDPOINT': 'FILLME'", "'ENDPOINT': '"+localhostEndpoint(f)+"'", 1)
	program = strings.Replace(program, "'PRIMARYKEY': 'FILLME'", "'PRIMARYKEY': '"+cosmos.EmulatorKey+"'", 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CosmosGetStarted.py"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := runProgram(t, f, dir, nil, python, "CosmosGetStarted.py")
	if got, want := string(stdout), "Hello World from Server 1!\nHello World from Server 2!\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// clientSDKs are the module paths of the client SDKs that tests and
// lapse-bench use and the server binary must not link.
var clientSDKs = []string{
	"github.com/Azure/azure-sdk-for-go/",
	"github.com/Azure/go-amqp",
	"github.com/rabbitmq/amqp091-go",
}

// issue 15.9: the served binary holds only the server; the benchmark
// client, which links the SDKs, is cmd/lapse-bench.
func TestServerBinaryLinksNoClientSDK(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set and there is no go command to list the dependencies with")
		}
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/lapse-emulator/lapse/cmd/lapse").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "github.com/lapse-emulator/lapse/server") {
		t.Fatalf("go list -deps gave %d packages without the server package: %q", len(deps), out)
	}
	for _, p := range deps {
		for _, sdk := range clientSDKs {
			if strings.HasPrefix(p, sdk) || p == strings.TrimSuffix(sdk, "/") {
				t.Errorf("cmd/lapse depends on %s, a client SDK (from %s)", p, sdk)
			}
		}
	}
}

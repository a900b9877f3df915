package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/lapse-emulator/lapse/cosmos"
	"github.com/lapse-emulator/lapse/dashboard"
)

// sandboxConfig10 is a sandbox's Service Bus Config.json of ten queues.
func sandboxConfig10() string {
	var qs []string
	for i := range 10 {
		qs = append(qs, `{"Name":"q`+strconv.Itoa(i)+`","Properties":{"DefaultMessageTimeToLive":"PT1H","DeadLetteringOnMessageExpiration":true}}`)
	}
	return `{"servicebusConfig":{"UserConfig":{"Namespaces":[{"Name":"sbemulatorns","Queues":[` + strings.Join(qs, ",") + `],"Topics":[]}],"Logging":{"Type":"File"}}}}`
}

// benchSandboxes creates and deletes sandboxes with body through the
// control API over HTTP, as a fixture does, and reports the latencies'
// median and 99th percentile (issue 29: p50 <= 5 ms, p99 <= 20 ms).
func benchSandboxes(b *testing.B, body string) {
	m := MustStart(b, "--log-level", "error")
	url := controlURL(m) + "/api/sandboxes"
	client := &http.Client{}
	var create, del []time.Duration
	for b.Loop() {
		t0 := time.Now()
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		var sb dashboard.Sandbox
		err = json.NewDecoder(resp.Body).Decode(&sb)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatalf("create: %d %v", resp.StatusCode, err)
		}
		t1 := time.Now()
		req, _ := http.NewRequest(http.MethodDelete, url+"/"+sb.ID, nil)
		resp, err = client.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			b.Fatalf("delete: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		create, del = append(create, t1.Sub(t0)), append(del, time.Since(t1))
	}
	for _, x := range []struct {
		name string
		d    []time.Duration
	}{{"create", create}, {"delete", del}} {
		slices.Sort(x.d)
		b.ReportMetric(float64(x.d[len(x.d)/2].Microseconds())/1000, x.name+"-p50-ms")
		b.ReportMetric(float64(x.d[len(x.d)*99/100].Microseconds())/1000, x.name+"-p99-ms")
	}
}

// BenchmarkSandboxCreateDelete: an empty sandbox.
func BenchmarkSandboxCreateDelete(b *testing.B) { benchSandboxes(b, `{}`) }

// BenchmarkSandboxCreateDelete10Entities: a sandbox with a Config.json of
// ten queues.
func BenchmarkSandboxCreateDelete10Entities(b *testing.B) { benchSandboxes(b, sandboxConfig10()) }

// vmRSS is this process's resident set in bytes, from /proc.
func vmRSS(tb testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status:", err)
	}
	for line := range bytes.Lines(b) {
		if f := strings.Fields(string(line)); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

// BenchmarkSandboxes1000 keeps 1,000 sandboxes of one Cosmos DB container
// each alive and reports the process's resident set grown by them (issue
// 29: <= 200 MB), and a point read's round trip in a sandbox and in the
// default world, side by side (within 10%).
func BenchmarkSandboxes1000(b *testing.B) {
	m := MustStart(b, "--log-level", "error")
	runtime.GC()
	rss0 := vmRSS(b)
	ctx := context.Background()
	var last dashboard.Sandbox
	for range 1000 {
		sb, err := m.sandboxes.Create(ctx, dashboard.SandboxRequest{
			CosmosConfig: json.RawMessage(`{"databases":[{"id":"db","containers":[{"id":"c","partitionKey":"/pk"}]}]}`)}, "127.0.0.1")
		if err != nil {
			b.Fatal(err)
		}
		last = sb
	}
	runtime.GC()
	rss := vmRSS(b) - rss0
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	box := cosmosClientKey(b, m, last.Cosmos.Key, tr)
	def := cosmosClientKey(b, m, cosmos.EmulatorKey, tr)
	mustCosmosTTLItem(b, def, 3600, "a")
	boxC, _ := box.NewContainer("db", "c")
	defC, _ := def.NewContainer("db", "c")
	if _, err := boxC.CreateItem(ctx, azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"a","pk":"p"}`), nil); err != nil {
		b.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	var inBox, inDef time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := boxC.ReadItem(ctx, pk, "a", nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := defC.ReadItem(ctx, pk, "a", nil); err != nil {
			b.Fatal(err)
		}
		inBox, inDef = inBox+t1.Sub(t0), inDef+time.Since(t1)
	}
	b.ReportMetric(float64(rss)/(1<<20), "MB-rss-1000")
	b.ReportMetric(float64(inBox.Microseconds())/float64(b.N), "sandbox-read-us")
	b.ReportMetric(float64(inDef.Microseconds())/float64(b.N), "default-read-us")
}

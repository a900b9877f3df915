package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkStartToHealthy measures lapse's start on an empty data folder:
// from NewMain until GET /healthz answers 200 (target: 50 ms at most).
// Closing is not counted.
func BenchmarkStartToHealthy(b *testing.B) {
	base := b.TempDir()
	tr := &http.Transport{DisableKeepAlives: true}
	client := &http.Client{Transport: tr}
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := NewMain()
		m.Stderr = io.Discard
		m.Logger = discard
		if err := m.ParseFlags(serveArgs(filepath.Join(base, strconv.Itoa(i))), noEnv); err != nil {
			b.Fatal(err)
		}
		if err := m.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		for {
			resp, err := client.Get(controlURL(m) + "/healthz")
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		b.StopTimer()
		if err := m.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

package cosmos

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// BenchmarkHandlerPointRead is a point read's cost in lapse's own code:
// the routes' handler alone, with the headers azcosmos sends, on no
// connection. BenchmarkRESTPointRead adds TLS, HTTP and a client.
func BenchmarkHandlerPointRead(b *testing.B) {
	e := core.NewEngine(core.Config{Store: core.NewMemStore()})
	now := time.Now()
	if err := e.Recover(context.Background(), now); err != nil {
		b.Fatal(err)
	}
	s, err := NewServer(Config{Addr: "127.0.0.1:0", Engine: e, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	h := s.handler()
	date := now.UTC().Format(http.TimeFormat)
	request := func(verb, path, typ, link string, body []byte, pk string) *http.Request {
		r, err := http.NewRequest(verb, "https://127.0.0.1:8081"+path, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		// What azcosmos sends, as a capture of its requests shows.
		r.Header.Set("Accept-Encoding", "gzip")
		r.Header.Set("User-Agent", "azsdk-go-azcosmos/v1.4.1 (go1.26.8; linux)")
		r.Header.Set("X-Ms-Cosmos-Sdk-Supportedcapabilities", "1")
		r.Header.Set("X-Ms-Date", date)
		r.Header.Set("X-Ms-Version", "2020-11-05")
		if pk != "" {
			r.Header.Set("X-Ms-Documentdb-Partitionkey", pk)
		}
		k, _ := base64.StdEncoding.DecodeString(EmulatorKey)
		mac := hmac.New(sha256.New, k)
		mac.Write(appendPayload(nil, verb, typ, link, date))
		r.Header.Set("Authorization", url.QueryEscape("type=master&ver=1.0&sig="+base64.StdEncoding.EncodeToString(mac.Sum(nil))))
		return r
	}
	w := &discardWriter{h: http.Header{}}
	serve := func(r *http.Request, want int) {
		clear(w.h)
		w.status = 0
		h.ServeHTTP(w, r)
		if w.status != want {
			b.Fatalf("%s %s: status %d, want %d", r.Method, r.URL.Path, w.status, want)
		}
	}
	serve(request("POST", "/dbs", "dbs", "", []byte(`{"id":"db"}`), ""), http.StatusCreated)
	serve(request("POST", "/dbs/db/colls", "colls", "dbs/db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`), ""), http.StatusCreated)
	item := `{"id":"item-0000000","pk":"pk-000","body":"` + strings.Repeat("x", 900) + `"}`
	serve(request("POST", "/dbs/db/colls/c/docs", "docs", "dbs/db/colls/c", []byte(item), `["pk-000"]`), http.StatusCreated)
	read := request("GET", "/dbs/db/colls/c/docs/item-0000000", "docs", "dbs/db/colls/c/docs/item-0000000", nil, `["pk-000"]`)
	b.ReportAllocs()
	for b.Loop() {
		serve(read, http.StatusOK)
	}
}

// discardWriter is a ResponseWriter that keeps the status and drops the
// body.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

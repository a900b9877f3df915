package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/httpserver"
)

// The Cosmos DB ceiling (--serve-cosmos-ceiling) is an HTTP server that
// answers the requests of the cosmos scenarios with fixed, well-formed
// answers and keeps nothing: no database, no check of the key. The
// scenarios run against it show what the azcosmos client and the machine
// alone allow: no server can answer faster than one that does no work, so
// an emulator's figure is between the ceiling's and zero, and a target of
// "k times another emulator" above the ceiling's ratio is out of any
// server's reach on that machine. It is a measuring device, not an
// emulator: it answers cosmos-create, cosmos-read, cosmos-upsert,
// cosmos-replace and cosmos-query-id (each query finds one item), but not
// cosmos-query-pk, whose check needs the items it stored.

// ceilingItem is the body of every item the ceiling returns: about 1 KB,
// as the scenarios' items are.
var ceilingItem = `{"id":"item-0000000","pk":"pk-000","rev":0,"body":"` + strings.Repeat("x", 900) +
	`","_rid":"AAAAAAAAAAABAAAAAAAAAA==","_self":"dbs/AAAAAA==/colls/AAAAAAAAAAA=/docs/AAAAAAAAAAABAAAAAAAAAA==/",` +
	`"_etag":"\"00000000-0000-0000-0000-000000000000\"","_attachments":"attachments/","_ts":1700000000}`

// ceilingHeaders are the headers the service sends with an item, and lapse
// with it, under the names the service writes (lower case but for the
// standard ones), with fixed values: the clients read several of them,
// and each costs the server and the client something to write and to
// read. A ceiling that sent fewer would bound a server that answers less
// than the service does, not lapse.
var ceilingHeaders = map[string][]string{
	"Content-Type":                        {"application/json"},
	"etag":                                {`"00000000-0000-0000-0000-000000000000"`},
	"lsn":                                 {"1"},
	"x-ms-activity-id":                    {"00000000-0000-0000-0000-000000000000"},
	"x-ms-alt-content-path":               {"dbs/db/colls/c"},
	"x-ms-content-path":                   {"AAAAAAAAAAA="},
	"x-ms-cosmos-llsn":                    {"1"},
	"x-ms-documentdb-partitionkeyrangeid": {"0"},
	"x-ms-gatewayversion":                 {"version=2.14.0"},
	"x-ms-global-committed-lsn":           {"1"},
	"x-ms-request-charge":                 {"1"},
	"x-ms-schemaversion":                  {"1.19"},
	"x-ms-serviceversion":                 {"version=2.14.0.0"},
	"x-ms-session-token":                  {"0:-1#1"},
}

// cosmosCeiling is the ceiling's handler.
func cosmosCeiling(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	h := w.Header()
	for k, v := range ceilingHeaders {
		h[k] = v // shared values: nothing writes to them
	}
	path := strings.Trim(r.URL.Path, "/")
	switch {
	case path == "" && r.Method == http.MethodGet:
		// The account, which the client reads first.
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		endpoint := fmt.Sprintf(`[{"name":"ceiling","databaseAccountEndpoint":"%s://%s/"}]`, scheme, r.Host)
		fmt.Fprintf(w, `{"id":"ceiling","_rid":"ceiling","writableLocations":%s,"readableLocations":%s,`+
			`"enableMultipleWriteLocations":false,"userConsistencyPolicy":{"defaultConsistencyLevel":"Session"}}`, endpoint, endpoint)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && strings.Contains(path, "/docs/"):
		io.WriteString(w, ceilingItem)
	case r.Method == http.MethodGet:
		// What the scenarios read otherwise (lapse-bench's preflight reads
		// a database that does not exist).
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"code":"NotFound","message":"the ceiling keeps nothing"}`)
	case r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json"):
		io.WriteString(w, `{"_rid":"AAAAAAAAAAA=","Documents":[`+ceilingItem+`],"_count":1}`)
	case r.Method == http.MethodPost:
		// Creates of databases, containers and items: the request's body.
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	default:
		// Replaces and upserts (PUT, and POST with the upsert header above).
		w.Write(body)
	}
}

// ceilingHandler is cosmosCeiling after work of CPU time on each request.
func ceilingHandler(work time.Duration) http.Handler {
	if work <= 0 {
		return http.HandlerFunc(cosmosCeiling)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for end := time.Now().Add(work); time.Now().Before(end); {
		}
		cosmosCeiling(w, r)
	})
}

// serveCosmosCeiling serves the ceiling on addr until ctx ends, over HTTPS
// when withTLS, with httpserver's own HTTP/1.1 loop when ownHTTP1 (else
// net/http's server), spending work on each request, saying where on out.
func serveCosmosCeiling(ctx context.Context, addr string, withTLS, ownHTTP1 bool, work time.Duration, out io.Writer) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	scheme := "http"
	var tlsConfig *tls.Config
	if withTLS {
		certPEM, keyPEM, err := httpserver.SelfSignedCert([]string{"localhost", "127.0.0.1"}, time.Now())
		if err != nil {
			return err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return err
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		scheme = "https"
	}
	if ownHTTP1 {
		// As lapse serves Cosmos DB: TLS told from plain HTTP by the
		// first byte, the own loop.
		s := httpserver.New("Cosmos DB ceiling", addr, ceilingHandler(work), nil)
		if tlsConfig != nil {
			s.ServeTLS(tlsConfig)
		}
		s.ServeOwnHTTP1()
		if err := s.Serve(l); err != nil {
			return err
		}
		fmt.Fprintf(out, "lapse-bench: the Cosmos DB ceiling answers on %s://%s/ (own HTTP/1.1 loop; keeps nothing; --cosmos-url of the cosmos scenarios but cosmos-query-pk)\n", scheme, l.Addr())
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return s.Close(sctx)
	}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	srv := &http.Server{Handler: ceilingHandler(work), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "lapse-bench: the Cosmos DB ceiling answers on %s://%s/ (keeps nothing; --cosmos-url of the cosmos scenarios but cosmos-query-pk)\n", scheme, l.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

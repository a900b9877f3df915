package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/httpserver"
)

// http1Handler answers each of the exchanges of TestOwnHTTP1AnswersAsNetHTTP
// by its path.
func http1Handler(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/hello":
		io.WriteString(w, "hello")
	case "/json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Ms-Request-Charge", "1")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"a"}`))
	case "/nocontent":
		w.WriteHeader(http.StatusNoContent)
	case "/nothing":
	case "/big":
		chunk := bytes.Repeat([]byte("x"), 1000)
		for range 300 {
			w.Write(chunk)
		}
	case "/flush":
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		io.WriteString(w, "second")
	case "/declared":
		w.Header().Set("Content-Length", "3")
		io.WriteString(w, "abc")
	case "/short":
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "abc")
	case "/close":
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	case "/echo":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%s %s %d", r.Method, b, r.ContentLength)
	case "/unread":
		io.WriteString(w, "not read")
	case "/oddheaders":
		w.Header()["Bad Name"] = []string{"dropped"}
		w.Header().Set("X-Broken", " a\r\nb\nc ")
		w.Header()["X-Two"] = []string{"1", "2"}
		io.WriteString(w, "odd")
	case "/remote":
		fmt.Fprintf(w, "%t %t", r.RemoteAddr != "", r.Host == "lapse")
	default:
		http.NotFound(w, r)
	}
}

// exchange is one or more requests written on a fresh connection and the
// answers read back.
type exchange struct {
	name string
	raw  string // the requests, as sent
	n    int    // how many answers to read (1 if 0)
	head bool   // the requests are HEAD
	bare bool   // refused before a handler: no Date
}

// answer is what a client sees of an answer.
type answer struct {
	Proto, Status string
	Header        http.Header
	Body          string
	Close         bool
	Chunked       bool
	Length        int64
}

// TestOwnHTTP1AnswersAsNetHTTP sends the same requests, byte for byte, to
// a server on net/http and one on the own HTTP/1.1 loop, and wants the
// same answers: status, headers but Date, body, framing and whether the
// connection stays open.
func TestOwnHTTP1AnswersAsNetHTTP(t *testing.T) {
	exchanges := http1Exchanges()
	var got [2][]map[string][]answer
	for i, own := range []bool{false, true} {
		s := httpserver.New("test API", "127.0.0.1:0", http.HandlerFunc(http1Handler), nil)
		if own {
			s.ServeOwnHTTP1()
		}
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		for _, ex := range exchanges {
			got[i] = append(got[i], map[string][]answer{ex.name: exchangeOn(t, s.Addr().String(), ex)})
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for i, ex := range exchanges {
		if diff := cmp.Diff(got[0][i], got[1][i]); diff != "" {
			t.Errorf("%s: net/http's answers (-) and the own loop's (+) differ:\n%s", ex.name, diff)
		}
	}
}

// http1Exchanges are the requests both servers are to answer alike.
func http1Exchanges() []exchange {
	bigBody := strings.Repeat("y", 300<<10)
	return []exchange{
		{name: "Sniffed", raw: "GET /hello HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "Typed", raw: "GET /json HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "NoContent", raw: "DELETE /nocontent HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "Nothing", raw: "GET /nothing HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "NotFound", raw: "GET /none HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "BigIsChunked", raw: "GET /big HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "FlushIsChunked", raw: "GET /flush HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "Declared", raw: "GET /declared HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "HandlerCloses", raw: "GET /close HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "Head", raw: "HEAD /hello HTTP/1.1\r\nHost: lapse\r\n\r\n", head: true},
		{name: "HeadNothing", raw: "HEAD /nothing HTTP/1.1\r\nHost: lapse\r\n\r\n", head: true},
		{name: "OddHeaders", raw: "GET /oddheaders HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "Remote", raw: "GET /remote HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "EchoLength", raw: "POST /echo HTTP/1.1\r\nHost: lapse\r\nContent-Length: 5\r\n\r\nabcde"},
		{name: "EchoChunked", raw: "PUT /echo HTTP/1.1\r\nHost: lapse\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"},
		{name: "KeepAlive", n: 3, raw: "GET /hello HTTP/1.1\r\nHost: lapse\r\n\r\n" +
			"POST /echo HTTP/1.1\r\nHost: lapse\r\nContent-Length: 2\r\n\r\nhi" +
			"GET /json HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "SmallUnreadBodyIsDropped", n: 2, raw: "POST /unread HTTP/1.1\r\nHost: lapse\r\nContent-Length: 4\r\n\r\nabcd" +
			"GET /hello HTTP/1.1\r\nHost: lapse\r\n\r\n"},
		{name: "LargeUnreadBodyCloses", raw: "POST /unread HTTP/1.1\r\nHost: lapse\r\nContent-Length: " + fmt.Sprint(len(bigBody)) + "\r\n\r\n" + bigBody},
		{name: "ExpectContinue", n: 2, raw: "POST /echo HTTP/1.1\r\nHost: lapse\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nabcde"},
		{name: "ExpectUnreadCloses", raw: "POST /unread HTTP/1.1\r\nHost: lapse\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nabcde"},
		{name: "ClientCloses", raw: "GET /hello HTTP/1.1\r\nHost: lapse\r\nConnection: close\r\n\r\n"},
		{name: "HTTP10", raw: "GET /hello HTTP/1.0\r\n\r\n"},
		{name: "HTTP10Flush", raw: "GET /flush HTTP/1.0\r\n\r\n"},
		{name: "HTTP10KeepAlive", n: 2, raw: "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
		{name: "HTTP10KeepAliveFlush", raw: "GET /flush HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
		{name: "NoHost", bare: true, raw: "GET /hello HTTP/1.1\r\n\r\n"},
		{name: "HTTP2", bare: true, raw: "GET /hello HTTP/2.0\r\nHost: lapse\r\n\r\n"},
		{name: "UnknownExpectation", raw: "POST /echo HTTP/1.1\r\nHost: lapse\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\nhi"},
		{name: "UnknownTransferCoding", bare: true, raw: "POST /echo HTTP/1.1\r\nHost: lapse\r\nTransfer-Encoding: gzip\r\n\r\nhi"},
		{name: "Malformed", bare: true, raw: "GET /hello HTTP/1.1\r\nHost lapse\r\n\r\n"},
		{name: "BadLength", bare: true, raw: "POST /echo HTTP/1.1\r\nHost: lapse\r\nContent-Length: x\r\n\r\n"},
		{name: "HeadersTooLarge", bare: true, raw: "GET /hello HTTP/1.1\r\nHost: lapse\r\nX-Big: " + strings.Repeat("z", 1<<20+8192) + "\r\n\r\n"},
	}
}

// exchangeOn sends ex on a new connection to addr and reads its answers.
func exchangeOn(t *testing.T, addr string, ex exchange) []answer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, ex.raw) // the server may answer before it has read all
	br := bufio.NewReader(c)
	var out []answer
	for range max(ex.n, 1) {
		method := http.MethodGet
		if ex.head {
			method = http.MethodHead
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("%s: %v", ex.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			body = append(body, "<"+err.Error()+">"...)
		}
		h := resp.Header.Clone()
		if h.Get("Date") == "" && !ex.bare && resp.StatusCode >= 200 {
			t.Errorf("%s: no Date header", ex.name)
		}
		h.Del("Date")
		out = append(out, answer{Proto: resp.Proto, Status: resp.Status, Header: h, Body: string(body),
			Close: resp.Close, Chunked: len(resp.TransferEncoding) > 0, Length: resp.ContentLength})
		if resp.Close {
			// The server closes its side: the client reads its end.
			if _, err := br.ReadByte(); err == nil {
				t.Errorf("%s: bytes after an answer that closes", ex.name)
			}
			break
		}
	}
	return out
}

// Close lets a request in flight finish and answer, closes the idle
// connections at once, and then returns.
func TestCloseLetsARequestInFlightFinish(t *testing.T) {
	forEachLoop(t, testCloseLetsARequestInFlightFinish)
}

func testCloseLetsARequestInFlightFinish(t *testing.T, loop func(*httpserver.Server)) {
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
		io.WriteString(w, "done "+r.URL.Path)
	})
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	url := "http://" + s.Addr().String()
	idle := &http.Client{Transport: &http.Transport{}}
	defer idle.CloseIdleConnections()
	if got := get(t, idle, url+"/quick"); got != "done /quick" {
		t.Fatalf("quick: %q", got)
	}
	slow := make(chan string, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{}}
		defer c.CloseIdleConnections()
		slow <- get(t, c, url+"/slow")
	}()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	// The idle connection goes at once; the busy one stays.
	waitFor(t, func() bool { return s.Connections() == 1 })
	select {
	case err := <-closed:
		t.Fatalf("Close returned with a request in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := <-slow; got != "done /slow" {
		t.Errorf("slow: %q", got)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// A request's context ends once its handler has returned.
func TestRequestContextEndsWithItsHandler(t *testing.T) {
	forEachLoop(t, testRequestContextEndsWithItsHandler)
}

func testRequestContextEndsWithItsHandler(t *testing.T, loop func(*httpserver.Server)) {
	ctxs := make(chan context.Context, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.Context().Err(); err != nil {
			t.Errorf("context ended in the handler: %v", err)
		}
		ctxs <- r.Context()
	})
	s := mustOpen(t, h, loop)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	get(t, c, "http://"+s.Addr().String())
	select {
	case <-(<-ctxs).Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the request's context is still alive")
	}
}

// A handler's panic closes its connection without an answer; the server
// goes on serving.
func TestPanicClosesOnlyItsConnection(t *testing.T) { forEachLoop(t, testPanicClosesOnlyItsConnection) }

func testPanicClosesOnlyItsConnection(t *testing.T, loop func(*httpserver.Server)) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic(http.ErrAbortHandler) // a panic neither server logs
		}
		io.WriteString(w, "fine")
	})
	s := mustOpen(t, h, loop)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	if _, err := c.Get("http://" + s.Addr().String() + "/panic"); err == nil {
		t.Error("an answer to a handler that panicked")
	}
	if got := get(t, c, "http://"+s.Addr().String()+"/"); got != "fine" {
		t.Errorf("after the panic: %q", got)
	}
}

// Go's client with "Expect: 100-continue" sends its body once the
// handler reads it.
func TestExpectContinueFromGoClient(t *testing.T) { forEachLoop(t, testExpectContinueFromGoClient) }

func testExpectContinueFromGoClient(t *testing.T, loop func(*httpserver.Server)) {
	s := mustOpen(t, http.HandlerFunc(http1Handler), loop)
	// A long wait for the 100 Continue: the body goes only when asked.
	tr := &http.Transport{ExpectContinueTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for range 2 {
		req, _ := http.NewRequest("POST", "http://"+s.Addr().String()+"/echo", strings.NewReader("hello"))
		req.Header.Set("Expect", "100-continue")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "POST hello 5" {
			t.Errorf("answer %q", b)
		}
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("%d connections, want the one kept alive", n)
	}
}

// get returns the body of a GET of url through c.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// mustOpen opens a server of h on a free port, made by loop, and closes
// it at the end of the test.
func mustOpen(tb testing.TB, h http.Handler, loop func(*httpserver.Server)) *httpserver.Server {
	tb.Helper()
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// FuzzOwnHTTP1AgainstNetHTTP sends the same bytes to a server on
// net/http and one on the own HTTP/1.1 loop, ends its sending side, and
// wants the same answers back, read as a client reads them (the order of
// the headers and the Date aside). The seeds are the exchanges of
// TestOwnHTTP1AnswersAsNetHTTP.
func FuzzOwnHTTP1AgainstNetHTTP(f *testing.F) {
	for _, ex := range http1Exchanges() {
		if len(ex.raw) < 64<<10 {
			f.Add([]byte(ex.raw))
		}
	}
	servers := [2]*httpserver.Server{}
	for i, loop := range []func(*httpserver.Server){func(*httpserver.Server) {}, (*httpserver.Server).ServeOwnHTTP1} {
		servers[i] = mustOpen(f, http.HandlerFunc(http1Handler), loop)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if emptyHost.Match(raw) {
			// The one known difference: http.ReadRequest keeps no
			// trace of an empty Host header, which net/http's server
			// takes and the own loop refuses as a missing one.
			return
		}
		var got [2][]answer
		for i, s := range servers {
			out, ok := sendAll(t, s.Addr().String(), raw)
			if !ok {
				return // a reset: what arrived before it is not comparable
			}
			got[i] = readAnswers(out)
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("for %q, net/http's answers (-) and the own loop's (+) differ:\n%s", raw, diff)
		}
	})
}

// emptyHost matches a request with an empty Host header.
var emptyHost = regexp.MustCompile(`(?im)^host:[ \t]*\r?$`)

// sendAll writes raw to a new connection to addr, ends its sending side,
// and returns all it reads until the server closes; false when the
// connection was reset.
func sendAll(t *testing.T, addr string, raw []byte) ([]byte, bool) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		c.Write(raw)
		c.(*net.TCPConn).CloseWrite()
	}()
	out, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("no end of the answers to %q", raw)
	}
	if err != nil {
		return nil, false
	}
	return out, true
}

// readAnswers reads out as a client of GET requests reads its answers,
// the Date headers dropped; what it cannot read is the last answer's
// Body.
func readAnswers(out []byte) []answer {
	br := bufio.NewReader(bytes.NewReader(out))
	var answers []answer
	for {
		if _, err := br.Peek(1); err != nil {
			return answers
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			rest, _ := io.ReadAll(br)
			return append(answers, answer{Body: fmt.Sprintf("<%v> %q", err, rest)})
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			body = append(body, "<"+err.Error()+">"...)
		}
		resp.Header.Del("Date")
		answers = append(answers, answer{Proto: resp.Proto, Status: resp.Status, Header: resp.Header, Body: string(body),
			Close: resp.Close, Chunked: len(resp.TransferEncoding) > 0, Length: resp.ContentLength})
	}
}

// A Close whose wait runs out cuts the connections still busy and ends
// their requests' contexts, so that a handler waiting on one returns.
func TestCloseEndsTheContextOfARequestItCuts(t *testing.T) {
	forEachLoop(t, testCloseEndsTheContextOfARequestItCuts)
}

func testCloseEndsTheContextOfARequestItCuts(t *testing.T, loop func(*httpserver.Server)) {
	started, ended := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		close(ended)
	})
	s := httpserver.New("test API", "127.0.0.1:0", h, nil)
	loop(s)
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	go c.Get("http://" + s.Addr().String())
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); err == nil {
		t.Error("Close waited out a request that never ends")
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context is still alive after Close")
	}
}

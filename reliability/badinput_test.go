//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// badinputCase is one kind of bad input sent to one listener.
type badinputCase struct {
	name string
	run  func(t *testing.T)
}

// The slow-client limits lapse keeps (server/amqp.go, rabbitmq/conn.go,
// servicebus/conn.go, httpserver; docs/cli.md documents the HTTP ones):
// the AMQP ports' protocol header (and TLS handshake) within 10 s, the
// RabbitMQ handshake within 10 s of connection.start, the Service Bus
// SASL and open exchange within 30 s, an HTTP request's headers within
// 10 s. A body has a minute (httpserver.DefaultBodyTimeout), which no flag
// lowers, so no case waits for it.
const (
	badinputHeaderLimit     = 10 * time.Second
	badinputRabbitLimit     = 10 * time.Second
	badinputServiceBusLimit = 30 * time.Second
	badinputHTTPHeaderLimit = 10 * time.Second
	// badinputMargin is added to every limit: lapse's timers fire on time,
	// and a loaded CI runner delays a goroutine by milliseconds, not
	// seconds; 5 s keeps the check honest (a connection never closed
	// still fails) without flaking.
	badinputMargin = 5 * time.Second
	// badinputPrompt bounds how long lapse may take to refuse input it
	// can judge at once.
	badinputPrompt = 10 * time.Second
)

// issue 16 (the standing test): bad input on every listener is refused as
// the real service refuses it (RabbitMQ 3.10, Service Bus, Cosmos DB, and
// lapse's own control API), nothing crashes or logs a panic, a good client
// of each protocol keeps working after every case and during the slow
// ones, and the goroutines come back to where they were.
func TestBadInputOnEveryListener(t *testing.T) {
	began := time.Now()
	config := filepath.Join(t.TempDir(), "Config.json")
	if err := os.WriteFile(config, []byte(badinputConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Start(t, "", "--servicebus-config", config)
	cfg := l.TLS()
	good := badinputNewGood(t, l, cfg)
	good.check(t)
	good.idle()
	before := l.Memory()

	quick := append(badinputAMQPCases(l, cfg), badinputHTTPCases(l, cfg)...)
	quick = append(quick, badinputAuthCases(l, cfg)...)
	failed := 0
	for _, c := range quick {
		if !t.Run(c.name, func(t *testing.T) {
			c.run(t)
			good.check(t)
		}) {
			failed++
		}
		l.Alive()
	}

	// The cases that wait for a slow-client limit run at once, each
	// subtest on a goroutine of its own (t.Parallel would run only
	// GOMAXPROCS of them at a time); a good client makes round trips all
	// along.
	slow := badinputSlowCases(l, cfg)
	slowBegan := time.Now()
	var slowFailed atomic.Int32
	t.Run("Slow", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, c := range slow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !t.Run(c.name, c.run) {
					slowFailed.Add(1)
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for rounds := 1; ; rounds++ {
			if err := good.roundTrips(); err != nil {
				t.Errorf("a good client failed while slow clients were held: %v", err)
			}
			select {
			case <-done:
				t.Logf("%d rounds of good round trips while slow clients were held", rounds)
				return
			case <-time.After(time.Second):
			}
		}
	})
	slowTook := time.Since(slowBegan)
	l.Alive()
	good.check(t)
	l.CheckLog()

	// Every connection of the bad input is gone: the goroutines come back
	// to their count before it, give or take 3 (the runtime's and the
	// HTTP servers' background goroutines come and go; one leaked
	// connection holds at least two: its reader and its writer, or its
	// HTTP serve loop and background read).
	good.idle()
	var after Memory
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		after = l.Memory()
		if after.Goroutines <= before.Goroutines+3 || time.Now().After(deadline) {
			break
		}
	}
	if after.Goroutines > before.Goroutines+3 {
		t.Errorf("goroutines %d after the bad input, %d before it: connections leaked", after.Goroutines, before.Goroutines)
	}
	t.Logf("bad input: %d cases (%d quick, %d slow in %v), %d failed, on 6 listeners in %v; before %v; after %v",
		len(quick)+len(slow), len(quick), len(slow), slowTook.Round(time.Millisecond), failed+int(slowFailed.Load()),
		time.Since(began).Round(time.Millisecond), before, after)
}

// badinputConfig declares the Service Bus queue the good client uses.
const badinputConfig = `{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": [{"Name": "good", "Properties": {}}], "Topics": []}], "Logging": {"Type": "File"}}}`

// badinputAMQPCases are the bad bytes on the AMQP ports, plain and TLS,
// that lapse refuses at once. AMQP 0-9-1 follows RabbitMQ 3.10: a
// protocol header it does not speak is answered with its own header and
// the socket closed (§4.2.2); a frame over frame-max closes the
// connection with 501 FRAME_ERROR. AMQP 1.0 follows §2.7.1: a frame over
// max-frame-size closes it with amqp:connection:framing-error.
func badinputAMQPCases(l *Lapse, cfg *tls.Config) []badinputCase {
	var cs []badinputCase
	for _, port := range []struct {
		name string
		tls  *tls.Config
	}{{"amqp", nil}, {"amqps", cfg}} {
		addr := l.Addrs[port.name]
		add := func(name string, run func(t *testing.T)) {
			cs = append(cs, badinputCase{port.name + "/" + name, run})
		}
		add("RandomBytes", func(t *testing.T) {
			c := badinputDial(t, addr, port.tls)
			start := time.Now()
			badinputWrite(t, c, badinputRandom(64, 1))
			got, _ := badinputEnd(t, c, start, badinputPrompt)
			if !bytes.Equal(got, badinputHeader091) {
				t.Errorf("lapse answered %q, want RabbitMQ's protocol header %q and the socket closed", got, badinputHeader091)
			}
		})
		if port.tls != nil {
			add("RandomBytesForTLSHandshake", func(t *testing.T) {
				c := badinputDial(t, addr, nil)
				start := time.Now()
				badinputWrite(t, c, badinputRandom(64, 2))
				got, _ := badinputEnd(t, c, start, badinputPrompt)
				if len(got) > 0 && got[0] != 0x15 { // an alert record at most
					t.Errorf("lapse answered a failed TLS handshake with %q", clip(got))
				}
			})
		}
		for _, h := range []struct {
			name   string
			header []byte
		}{{"0-9-1", badinputHeader091}, {"1.0", badinputHeader10}, {"SASL", badinputHeaderSASL}} {
			add(h.name+"/HeaderThenGarbage", func(t *testing.T) {
				c := badinputDial(t, addr, port.tls)
				start := time.Now()
				badinputWrite(t, c, append(append([]byte(nil), h.header...), badinputRandom(256, 3)...))
				got, _ := badinputEnd(t, c, start, badinputPrompt)
				if h.name == "0-9-1" {
					if code, text := badinputRabbitClose(got); code != 0 && code != 501 && code != 505 {
						t.Errorf("closed with %d %q, want 501 FRAME_ERROR or 505 UNEXPECTED_FRAME", code, text)
					}
				}
			})
			add(h.name+"/TruncatedFrameThenClose", func(t *testing.T) {
				c := badinputDial(t, addr, port.tls)
				badinputWrite(t, c, append(append([]byte(nil), h.header...), 0, 0, 0, 64, 2))
				c.Close()
			})
		}
		add("0-9-1/Frame4GiB", func(t *testing.T) {
			c := badinputDial(t, addr, port.tls)
			start := time.Now()
			badinputWrite(t, c, append(append([]byte(nil), badinputHeader091...), badinput4GiB091...))
			got, _ := badinputEnd(t, c, start, badinputPrompt)
			if code, text := badinputRabbitClose(got); code != 501 || !strings.Contains(text, "frame_too_large") {
				t.Errorf("closed with %d %q, want 501 FRAME_ERROR ... frame_too_large", code, text)
			}
		})
		add("1.0/Frame4GiBAfterOpen", func(t *testing.T) {
			c := badinputDial(t, addr, port.tls)
			start := time.Now()
			msg := append(append(append([]byte(nil), badinputHeader10...), badinputOpen...), badinput4GiB10...)
			badinputWrite(t, c, msg)
			got, _ := badinputEnd(t, c, start, badinputPrompt)
			if !bytes.Contains(got, []byte("amqp:connection:framing-error")) {
				t.Errorf("closed with %q, want a close with amqp:connection:framing-error", clip(got))
			}
		})
		add("1.0/Frame4GiBInPlaceOfOpen", func(t *testing.T) {
			c := badinputDial(t, addr, port.tls)
			start := time.Now()
			badinputWrite(t, c, append(append([]byte(nil), badinputHeader10...), badinput4GiB10...))
			badinputEnd(t, c, start, badinputPrompt)
		})
		add("SASL/Frame4GiB", func(t *testing.T) {
			c := badinputDial(t, addr, port.tls)
			start := time.Now()
			sasl := append([]byte(nil), badinput4GiB10...)
			sasl[5] = 1 // a SASL frame
			badinputWrite(t, c, append(append([]byte(nil), badinputHeaderSASL...), sasl...))
			badinputEnd(t, c, start, badinputPrompt)
		})
	}
	return cs
}

// badinputHTTPTarget is an HTTP listener and a request on it whose body
// the API reads, with the credentials it wants.
type badinputHTTPTarget struct {
	name string
	addr string
	tls  *tls.Config
	// method and path of a request that reads a body; headers are its
	// credentials and content type, lines ending in CRLF.
	method, path string
	headers      func() string
	// tooLarge is the status and a piece of the text of the answer to a
	// body over the API's limit.
	tooLarge     int
	tooLargeText string
}

func badinputHTTPTargets(l *Lapse, cfg *tls.Config) []badinputHTTPTarget {
	cosmosHeaders := func() string {
		date := time.Now().UTC().Format(http.TimeFormat)
		return "x-ms-date: " + date + "\r\nx-ms-version: 2020-07-15\r\nAuthorization: " +
			badinputCosmosAuth(CosmosKey, "post", "dbs", "", date) + "\r\nContent-Type: application/json\r\n"
	}
	return []badinputHTTPTarget{
		// Cosmos DB: 413 for a request over 2 MB, as the service.
		{"cosmosHTTPS", l.Addrs["cosmos"], cfg, "POST", "/dbs", cosmosHeaders, 413, "RequestEntityTooLarge"},
		{"cosmosHTTP", l.Addrs["cosmos"], nil, "POST", "/dbs", cosmosHeaders, 413, "RequestEntityTooLarge"},
		// The ATOM API refuses a description over 1 MiB as invalid.
		{"servicebusAdmin", l.Addrs["servicebusAdmin"], nil, "PUT", "/big", func() string {
			return "Authorization: " + badinputSAS("SAS_KEY_VALUE", "http://lapse/") + "\r\nContent-Type: application/atom+xml\r\n"
		}, 400, "larger than"},
		// RabbitMQ's management.http.max_body_size, 10 MB: 400 bad_request.
		{"rabbitmqManagement", l.Addrs["rabbitmqManagement"], nil, "PUT", "/api/queues/%2F/big", func() string {
			return "Authorization: Basic Z3Vlc3Q6Z3Vlc3Q=\r\nContent-Type: application/json\r\n"
		}, 400, "Exceeded HTTP request body size limit"},
		// The control API: 413 over 1 MiB.
		{"control", l.Addrs["control"], nil, "POST", "/api/clock/advance", func() string {
			return "Content-Type: application/json\r\n"
		}, 413, "request body over"},
	}
}

// badinputHTTPCases are the bad requests on every HTTP listener that lapse
// refuses at once: Go's HTTP server answers a malformed request 400 and
// headers over 1 MiB 431; each API answers a body over its limit as the
// real service does, whether announced (4 GiB) or chunked.
func badinputHTTPCases(l *Lapse, cfg *tls.Config) []badinputCase {
	var cs []badinputCase
	spaces := bytes.Repeat([]byte{' '}, 64<<10)
	for _, h := range badinputHTTPTargets(l, cfg) {
		add := func(name string, run func(t *testing.T)) {
			cs = append(cs, badinputCase{h.name + "/" + name, run})
		}
		add("RandomBytes", func(t *testing.T) {
			c := badinputDial(t, h.addr, h.tls)
			status, _ := badinputAnswer(t, c, append(badinputRandom(4096, 4), "\r\n\r\n"...), nil, false)
			if status != 400 {
				t.Errorf("status %d, want 400", status)
			}
		})
		add("RequestLineThenGarbage", func(t *testing.T) {
			c := badinputDial(t, h.addr, h.tls)
			req := append([]byte(h.method+" "+h.path+" HTTP/1.1\r\nHost: lapse\r\n"), badinputRandom(4096, 5)...)
			status, _ := badinputAnswer(t, c, append(req, "\r\n\r\n"...), nil, false)
			if status != 400 {
				t.Errorf("status %d, want 400", status)
			}
		})
		// Go's HTTP server reads headers up to 1 MiB and 4 KiB: a header
		// of 1 MiB is read and answered as any request, one past the
		// limit is refused with 431.
		add("HeaderOf1MiB", func(t *testing.T) {
			c := badinputDial(t, h.addr, h.tls)
			req := "GET /badinput HTTP/1.1\r\nHost: lapse\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n"
			if status, _ := badinputAnswer(t, c, []byte(req), nil, false); status < 400 || status >= 500 {
				t.Errorf("status %d, want a 4xx", status)
			}
		})
		add("HeadersPast1MiB", func(t *testing.T) {
			c := badinputDial(t, h.addr, h.tls)
			req := "GET /badinput HTTP/1.1\r\nHost: lapse\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\nX-More: " + strings.Repeat("b", 8<<10) + "\r\n\r\n"
			if status, _ := badinputAnswer(t, c, []byte(req), nil, false); status != 431 {
				t.Errorf("status %d, want 431", status)
			}
		})
		for _, framing := range []string{"Body4GiBAnnounced", "BodyChunkedPastTheLimit"} {
			add(framing, func(t *testing.T) {
				c := badinputDial(t, h.addr, h.tls)
				head := h.method + " " + h.path + " HTTP/1.1\r\nHost: lapse\r\n" + h.headers()
				chunked := framing == "BodyChunkedPastTheLimit"
				if chunked {
					head += "Transfer-Encoding: chunked\r\n\r\n"
				} else {
					head += "Content-Length: 4294967296\r\n\r\n"
				}
				status, body := badinputAnswer(t, c, []byte(head), spaces, chunked)
				if status != h.tooLarge || !strings.Contains(body, h.tooLargeText) {
					t.Errorf("status %d %q, want %d with %q", status, clip([]byte(body)), h.tooLarge, h.tooLargeText)
				}
			})
		}
		add("TruncatedRequestThenClose", func(t *testing.T) {
			c := badinputDial(t, h.addr, h.tls)
			badinputWrite(t, c, []byte(h.method+" "+h.path+" HT"))
			c.Close()
		})
	}
	return append(cs, badinputMalformedCases(l, cfg)...)
}

// badinputMalformedCases send a body that does not parse to each API:
// JSON to Cosmos DB (with azcosmos), the management and control APIs, ATOM
// XML to the Service Bus administration API. Each answers 400.
func badinputMalformedCases(l *Lapse, cfg *tls.Config) []badinputCase {
	raw := func(t *testing.T, listener, method, path, auth, contentType, body string) (int, string) {
		t.Helper()
		c := badinputDial(t, l.Addrs[listener], nil)
		head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: lapse\r\nContent-Type: %s\r\nContent-Length: %d\r\n", method, path, contentType, len(body))
		if auth != "" {
			head += "Authorization: " + auth + "\r\n"
		}
		return badinputAnswer(t, c, []byte(head+"\r\n"+body), nil, false)
	}
	return []badinputCase{
		{"cosmosHTTPS/MalformedJSON", func(t *testing.T) {
			ctr, err := badinputCosmosClient(t, l, CosmosKey, badinputTransport(t, cfg)).NewContainer("badinput", "good")
			if err != nil {
				t.Fatal(err)
			}
			_, err = ctr.CreateItem(context.Background(), azcosmos.NewPartitionKeyString("p"), []byte(`{"id": "x", "pk": "p", `), nil)
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != 400 || !strings.Contains(err.Error(), "BadRequest") {
				t.Errorf("CreateItem with malformed JSON: %v, want 400 BadRequest", err)
			}
		}},
		{"servicebusAdmin/MalformedXML", func(t *testing.T) {
			status, body := raw(t, "servicebusAdmin", "PUT", "/malformed", badinputSAS("SAS_KEY_VALUE", "http://lapse/"), "application/atom+xml",
				`<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription`)
			if status != 400 || !strings.Contains(body, "<Code>400</Code>") {
				t.Errorf("status %d %q, want 400 with an <Error>", status, body)
			}
		}},
		{"rabbitmqManagement/MalformedJSON", func(t *testing.T) {
			status, body := raw(t, "rabbitmqManagement", "PUT", "/api/queues/%2F/malformed", "Basic Z3Vlc3Q6Z3Vlc3Q=", "application/json", `{"durable": tru`)
			if status != 400 || !strings.Contains(body, `"reason":"not_json"`) {
				t.Errorf("status %d %q, want 400 bad_request not_json", status, body)
			}
		}},
		{"control/MalformedJSON", func(t *testing.T) {
			status, body := raw(t, "control", "POST", "/api/clock/advance", "", "application/json", `{"by": `)
			if status != 400 || !strings.Contains(body, `"error"`) {
				t.Errorf("status %d %q, want 400 with {\"error\": ...}", status, body)
			}
		}},
	}
}

// badinputSlowCases are the clients that send part of what they should and
// then nothing, or one byte every 100 ms: lapse must end each connection
// within its slow-client limit.
func badinputSlowCases(l *Lapse, cfg *tls.Config) []badinputCase {
	var cs []badinputCase
	hold := func(name, addr string, c *tls.Config, first, trickle []byte, limit time.Duration) {
		cs = append(cs, badinputCase{name, func(t *testing.T) {
			conn := badinputDial(t, addr, c)
			start := time.Now()
			badinputWrite(t, conn, first)
			if trickle != nil {
				stop := make(chan struct{})
				defer close(stop)
				go badinputTrickle(conn, trickle, stop)
			}
			_, took := badinputEnd(t, conn, start, limit+badinputMargin)
			// lapse's deadline starts after ours: closing sooner than
			// the limit means the bytes were refused, and the case
			// measured no limit.
			if took < limit-time.Second {
				t.Errorf("closed after %v, before the limit %v: the case does not hold the connection", took.Round(time.Millisecond), limit)
			}
			t.Logf("closed after %v (limit %v)", took.Round(time.Millisecond), limit)
		}})
	}
	for _, port := range []struct {
		name string
		tls  *tls.Config
	}{{"amqp", nil}, {"amqps", cfg}} {
		addr := l.Addrs[port.name]
		hold(port.name+"/HeaderTruncatedThenHang", addr, port.tls, []byte("AMQP"), nil, badinputHeaderLimit)
		hold(port.name+"/0-9-1/TruncatedFrameThenHang", addr, port.tls, append(append([]byte(nil), badinputHeader091...), 1, 0, 0, 0), nil, badinputRabbitLimit)
		hold(port.name+"/0-9-1/OneBytePer100ms", addr, port.tls, append(append([]byte(nil), badinputHeader091...), 1, 0, 0, 0, 0, 1, 0), []byte("x"), badinputRabbitLimit)
		hold(port.name+"/1.0/TruncatedFrameThenHang", addr, port.tls, append(append([]byte(nil), badinputHeader10...), 0, 0, 1), nil, badinputServiceBusLimit)
		hold(port.name+"/1.0/OneBytePer100ms", addr, port.tls, append(append([]byte(nil), badinputHeader10...), 0, 1, 0, 0, 2, 0, 0, 0), []byte("x"), badinputServiceBusLimit)
		hold(port.name+"/SASL/OneBytePer100ms", addr, port.tls, append(append([]byte(nil), badinputHeaderSASL...), 0, 0, 2, 0, 2, 1, 0, 0), []byte("x"), badinputServiceBusLimit)
	}
	for _, h := range badinputHTTPTargets(l, cfg) {
		hold(h.name+"/TruncatedHeadersThenHang", h.addr, h.tls, []byte("GET / HTTP/1.1\r\nHost: lapse\r\n"), nil, badinputHTTPHeaderLimit)
		hold(h.name+"/HeadersOneBytePer100ms", h.addr, h.tls, []byte("GET / HTTP/1.1\r\nHost: lapse\r\nX-Slow: "), []byte("a"), badinputHTTPHeaderLimit)
	}
	return cs
}

//go:build reliability

package reliability

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	be "encoding/binary" // "binary" is the harness's path of the lapse binary
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/rabbitmq/amqp091-go"
)

// This file holds the raw-socket tools and the good clients of
// TestBadInputOnEveryListener (badinput_test.go).

// badinputSeed seeds the random bytes the bad-input cases send, so that a
// failure can be replayed.
const badinputSeed = 16

// badinputRandom returns n random bytes, the nth draw of the fixed seed,
// whose first byte is 0x01: neither a letter (an HTTP method, "AMQP") nor
// 0x16 (a TLS handshake), so a listener that sniffs the first byte takes
// them for its plain protocol.
func badinputRandom(n int, draw uint64) []byte {
	r := rand.New(rand.NewPCG(badinputSeed, draw))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b[0] = 0x01
	return b
}

// badinputDial opens a connection to addr, over TLS when cfg is not nil.
func badinputDial(t *testing.T, addr string, cfg *tls.Config) net.Conn {
	t.Helper()
	d := &net.Dialer{Timeout: 10 * time.Second}
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = tls.DialWithDialer(d, "tcp", addr, cfg)
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// badinputWrite writes b, failing the test on an error.
func badinputWrite(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// badinputEnd reads what lapse still sends until it ends the connection,
// and fails the test unless that happens within limit of start. It
// returns the bytes read and the time from start to the end.
func badinputEnd(t *testing.T, c net.Conn, start time.Time, limit time.Duration) ([]byte, time.Duration) {
	t.Helper()
	c.SetReadDeadline(start.Add(limit))
	var buf bytes.Buffer
	_, err := io.Copy(&buf, c)
	took := time.Since(start)
	switch {
	case err == nil, errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		// closed (a reset too: lapse closed with bytes of ours unread)
	case errors.Is(err, net.ErrClosed):
		t.Fatalf("the test closed its own connection: %v", err)
	case errors.Is(err, syscall.EPIPE), isTLSAlert(err):
		// a TLS peer that ends the connection with an alert
	default:
		t.Fatalf("lapse kept the connection open %v (limit %v) after %q: %v", took.Round(time.Millisecond), limit, clip(buf.Bytes()), err)
	}
	return buf.Bytes(), took
}

// isTLSAlert says whether err is a TLS alert or a handshake failure, which
// a TLS connection ends with.
func isTLSAlert(err error) bool {
	var alert tls.AlertError
	var rec tls.RecordHeaderError
	return errors.As(err, &alert) || errors.As(err, &rec) || strings.Contains(err.Error(), "tls: ")
}

// clip shortens b for a message.
func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// badinputTrickle writes one byte of b every 100 ms, over and over, until
// the connection fails or stop closes.
func badinputTrickle(c net.Conn, b []byte, stop <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte{b[i%len(b)]}); err != nil {
			return
		}
	}
}

// badinputAnswer writes head and then body chunks (HTTP chunked framing
// when chunked) from a goroutine while it reads lapse's answer, which a
// server that refuses a request gives before it has read all of it. It
// stops writing once the answer came or 64 MiB went out, and returns the
// answer's status and body.
func badinputAnswer(t *testing.T, c net.Conn, head []byte, chunk []byte, chunked bool) (int, string) {
	t.Helper()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		if _, err := c.Write(head); err != nil {
			return
		}
		var frame []byte
		if chunked {
			frame = append(fmt.Appendf(nil, "%x\r\n", len(chunk)), chunk...)
			frame = append(frame, "\r\n"...)
		} else {
			frame = chunk
		}
		for sent := 0; chunk != nil && sent < 64<<20; sent += len(chunk) {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Write(frame); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b)
}

// badinputRabbitClose finds AMQP 0-9-1 connection.close (class 10, method
// 50, §1.4.2.5) in what lapse sent and returns its reply code and text, 0
// when there is none.
func badinputRabbitClose(b []byte) (int, string) {
	for len(b) >= 8 {
		if string(b[:4]) == "AMQP" {
			b = b[8:]
			continue
		}
		size := int64(be.BigEndian.Uint32(b[3:7]))
		if int64(len(b)) < 8+size {
			break
		}
		p := b[7 : 7+size]
		if b[0] == 1 && len(p) >= 7 && be.BigEndian.Uint16(p) == 10 && be.BigEndian.Uint16(p[2:]) == 50 {
			text := ""
			if n := int(p[6]); 7+n <= len(p) {
				text = string(p[7 : 7+n])
			}
			return int(be.BigEndian.Uint16(p[4:])), text
		}
		b = b[8+size:]
	}
	return 0, ""
}

// AMQP protocol headers and frames written by hand (no codec of lapse's).
var (
	badinputHeader091  = []byte("AMQP\x00\x00\x09\x01")
	badinputHeader10   = []byte("AMQP\x00\x01\x00\x00")
	badinputHeaderSASL = []byte("AMQP\x03\x01\x00\x00")
	// badinputOpen is an AMQP 1.0 frame holding open (§2.7.1) with only
	// its container-id, "badinput".
	badinputOpen = []byte{0, 0, 0, 24, 2, 0, 0, 0, 0x00, 0x53, 0x10, 0xc0, 11, 1, 0xa1, 8, 'b', 'a', 'd', 'i', 'n', 'p', 'u', 't'}
	// badinput4GiB10 is the header of an AMQP 1.0 frame announcing 4 GiB
	// (§2.3.1: size, data offset 2, type 0, channel 0).
	badinput4GiB10 = []byte{0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0}
	// badinput4GiB091 is the header of an AMQP 0-9-1 method frame on
	// channel 0 announcing 4 GiB (§4.2.3).
	badinput4GiB091 = []byte{1, 0, 0, 0xff, 0xff, 0xff, 0xff}
)

// badinputCosmosAuth signs a Cosmos DB request with key as the REST API's
// master-key tokens are: HMAC-SHA256 of verb, resource type, resource link
// and date, lower-cased, each followed by a newline, and an empty line.
func badinputCosmosAuth(key, verb, resType, link, date string) string {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		panic(err)
	}
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(strings.ToLower(verb) + "\n" + resType + "\n" + link + "\n" + strings.ToLower(date) + "\n\n"))
	return url.QueryEscape("type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

// badinputSAS is a Service Bus shared access signature for resource,
// signed with key under the name RootManageSharedAccessKey, valid for an
// hour.
func badinputSAS(key, resource string) string {
	sr := url.QueryEscape(resource)
	se := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(sr + "\n" + se))
	sig := url.QueryEscape(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn=RootManageSharedAccessKey"
}

// badinputGood holds one client per protocol that keeps working while the
// bad input comes: a round trip on each proves lapse still serves.
type badinputGood struct {
	l         *Lapse
	rabbit    *amqp.Connection
	sb        *azservicebus.Client
	sender    *azservicebus.Sender
	receiver  *azservicebus.Receiver
	container *azcosmos.ContainerClient
	cosmosTr  *http.Transport
	httpTr    *http.Transport
	n         int
}

// badinputNewGood connects the good clients and declares what they use:
// RabbitMQ queue badinput-good, Cosmos container badinput/good; the
// Service Bus queue good comes from the configuration file.
func badinputNewGood(t *testing.T, l *Lapse, cfg *tls.Config) *badinputGood {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g := &badinputGood{l: l, cosmosTr: &http.Transport{TLSClientConfig: cfg}, httpTr: &http.Transport{}}
	var err error
	if g.rabbit, err = amqp.Dial(l.RabbitMQURL()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.rabbit.Close() })
	ch, err := g.rabbit.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("badinput-good", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	ch.Close()
	if g.sb, err = azservicebus.NewClientFromConnectionString(l.ServiceBusConnectionString(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.sb.Close(context.Background()) })
	if g.sender, err = g.sb.NewSender("good", nil); err != nil {
		t.Fatal(err)
	}
	if g.receiver, err = g.sb.NewReceiverForQueue("good", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete}); err != nil {
		t.Fatal(err)
	}
	cc := badinputCosmosClient(t, l, CosmosKey, g.cosmosTr)
	if _, err := cc.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "badinput"}, nil); err != nil {
		t.Fatal(err)
	}
	db, err := cc.NewDatabase("badinput")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "good",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if g.container, err = db.NewContainer("good"); err != nil {
		t.Fatal(err)
	}
	return g
}

// badinputCosmosClient is an azcosmos client of lapse's HTTPS endpoint
// signing with key, over tr (which trusts lapse's certificate).
func badinputCosmosClient(t *testing.T, l *Lapse, key string, tr *http.Transport) *azcosmos.Client {
	t.Helper()
	c, err := l.CosmosClient(key, tr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// check makes one round trip with every good client: a RabbitMQ publish
// and get, a Service Bus send and receive, a Cosmos upsert and read, and
// a GET on the administration, management and control APIs.
func (g *badinputGood) check(t *testing.T) {
	t.Helper()
	if err := g.roundTrips(); err != nil {
		t.Fatalf("a good client failed: %v", err)
	}
}

func (g *badinputGood) roundTrips() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g.n++
	body := fmt.Sprintf("good %d", g.n)
	ch, err := g.rabbit.Channel()
	if err != nil {
		return fmt.Errorf("RabbitMQ channel: %w", err)
	}
	defer ch.Close()
	if err := ch.PublishWithContext(ctx, "", "badinput-good", false, false, amqp.Publishing{Body: []byte(body)}); err != nil {
		return fmt.Errorf("RabbitMQ publish: %w", err)
	}
	if m, ok, err := ch.Get("badinput-good", true); err != nil || !ok || string(m.Body) != body {
		return fmt.Errorf("RabbitMQ get: %q, %v, %v; want %q", m.Body, ok, err, body)
	}
	if err := g.sender.SendMessage(ctx, &azservicebus.Message{Body: []byte(body)}, nil); err != nil {
		return fmt.Errorf("Service Bus send: %w", err)
	}
	ms, err := g.receiver.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(ms) != 1 || string(ms[0].Body) != body {
		return fmt.Errorf("Service Bus receive: %d messages, %v; want %q", len(ms), err, body)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	doc := fmt.Sprintf(`{"id":"good","pk":"p","n":%d}`, g.n)
	if _, err := g.container.UpsertItem(ctx, pk, []byte(doc), nil); err != nil {
		return fmt.Errorf("Cosmos upsert: %w", err)
	}
	r, err := g.container.ReadItem(ctx, pk, "good", nil)
	if err != nil || !bytes.Contains(r.Value, fmt.Appendf(nil, `"n":%d`, g.n)) {
		return fmt.Errorf("Cosmos read: %s, %v", r.Value, err)
	}
	for _, get := range []struct{ listener, path, auth string }{
		{"servicebusAdmin", "/health", ""},
		{"rabbitmqManagement", "/api/overview", "Basic " + base64.StdEncoding.EncodeToString([]byte("guest:guest"))},
		{"control", "/api/clock", ""},
	} {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+g.l.Addrs[get.listener]+get.path, nil)
		if get.auth != "" {
			req.Header.Set("Authorization", get.auth)
		}
		resp, err := (&http.Client{Transport: g.httpTr}).Do(req)
		if err != nil {
			return fmt.Errorf("GET %s on %s: %w", get.path, get.listener, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s on %s: %s", get.path, get.listener, resp.Status)
		}
	}
	return nil
}

// idle closes the good clients' idle HTTP connections, so that lapse's
// goroutine count holds only what the bad input may have left.
func (g *badinputGood) idle() {
	g.cosmosTr.CloseIdleConnections()
	g.httpTr.CloseIdleConnections()
}

// badinputTransport is an HTTP transport trusting cfg whose idle
// connections close at the end of the test, so that they do not count in
// lapse's goroutines.
func badinputTransport(t *testing.T, cfg *tls.Config) *http.Transport {
	tr := &http.Transport{TLSClientConfig: cfg}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

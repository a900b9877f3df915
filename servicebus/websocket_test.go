package servicebus_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/coder/websocket"
	"github.com/lapse-emulator/lapse/servicebus"
	codec "github.com/lapse-emulator/lapse/servicebus/amqp"
)

// mustWebSocketServer serves f's WebSocketHandler over plain HTTP (the
// TLS around it is the server package's) and returns its base URL.
func (f *fixture) mustWebSocketServer() string {
	f.tb.Helper()
	hs := httptest.NewServer(f.s.WebSocketHandler())
	f.tb.Cleanup(hs.Close)
	return hs.URL
}

// mustDialWebSocket opens a WebSocket to url offering protocols and
// returns it as a stream of binary messages.
func mustDialWebSocket(tb testing.TB, url string, protocols ...string) (net.Conn, string) {
	tb.Helper()
	ws, _, err := websocket.Dial(ctx(tb), url, &websocket.DialOptions{Subprotocols: protocols})
	if err != nil {
		tb.Fatalf("WebSocket to %s offering %q: %v", url, protocols, err)
	}
	nc := websocket.NetConn(context.Background(), ws, websocket.MessageBinary)
	tb.Cleanup(func() { nc.Close() })
	return nc, ws.Subprotocol()
}

// issue 31: azservicebus's WebSocket transport (ClientOptions.
// NewWebSocketConn) sends and receives through the handler as over TCP:
// SASL, CBS and links all the same.
func TestWebSocketSDKSendReceive(t *testing.T) {
	f := MustServer(t)
	f.MustQueue("orders", nil)
	base := f.mustWebSocketServer()
	hosts := make(chan string, 10)
	c := f.MustClientWith(&azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{MaxRetries: -1},
		NewWebSocketConn: func(ctx context.Context, args azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
			hosts <- args.Host
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+servicebus.WebSocketPath,
				&websocket.DialOptions{Subprotocols: []string{"AMQPWSB10"}})
			if err != nil {
				return nil, err
			}
			return websocket.NetConn(context.Background(), ws, websocket.MessageBinary), nil
		},
	})
	snd, err := c.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close(ctx(t))
	if err := snd.SendMessage(ctx(t), &azservicebus.Message{Body: []byte("over a WebSocket")}, nil); err != nil {
		t.Fatalf("send over a WebSocket: %v", err)
	}
	// A message near the standard tier's 256 KB limit is one WebSocket
	// message of that size, past the WebSocket library's default limit.
	big := strings.Repeat("x", 200*1024)
	if err := snd.SendMessage(ctx(t), &azservicebus.Message{Body: []byte(big)}, nil); err != nil {
		t.Fatalf("send 200 KB over a WebSocket: %v", err)
	}
	rcv, err := c.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close(ctx(t))
	msgs, err := rcv.ReceiveMessages(ctx(t), 1, nil)
	if err != nil {
		t.Fatalf("receive over a WebSocket: %v", err)
	}
	if len(msgs) != 1 || string(msgs[0].Body) != "over a WebSocket" {
		t.Fatalf("received %d messages: %+v", len(msgs), msgs)
	}
	if err := rcv.CompleteMessage(ctx(t), msgs[0], nil); err != nil {
		t.Fatal(err)
	}
	if msgs, err = rcv.ReceiveMessages(ctx(t), 1, nil); err != nil || len(msgs) != 1 || string(msgs[0].Body) != big {
		t.Fatalf("receive 200 KB over a WebSocket: %d messages, %v", len(msgs), err)
	}
	// The SDK asks for the service's path on the namespace's host.
	if h := <-hosts; !strings.HasSuffix(h, "/"+strings.TrimPrefix(servicebus.WebSocketPath, "/")) || !strings.HasPrefix(h, "wss://") {
		t.Errorf("the SDK dials %q, not wss://<namespace>%s", h, servicebus.WebSocketPath)
	}
}

// issue 31: the handler upgrades only GET WebSocketPath asking for an AMQP
// subprotocol; the AMQP bytes then flow as on TCP.
func TestWebSocketHandshake(t *testing.T) {
	f := MustServer(t)
	base := f.mustWebSocketServer()
	upgrade := map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
	}
	for _, tc := range []struct {
		name, path, protocols string
		plain                 bool // no upgrade headers
		want                  int
		wantProtocol          string
	}{
		{"AMQPWSB10", servicebus.WebSocketPath, "AMQPWSB10", false, http.StatusSwitchingProtocols, "AMQPWSB10"},
		{"OASISName", servicebus.WebSocketPath, "amqp", false, http.StatusSwitchingProtocols, "amqp"},
		{"PrefersAMQPWSB10", servicebus.WebSocketPath, "amqp, AMQPWSB10", false, http.StatusSwitchingProtocols, "AMQPWSB10"},
		{"NoSubprotocol", servicebus.WebSocketPath, "", false, http.StatusBadRequest, ""},
		{"OtherSubprotocol", servicebus.WebSocketPath, "mqtt", false, http.StatusBadRequest, ""},
		{"OtherPath", "/$servicebus/other", "AMQPWSB10", false, http.StatusNotFound, ""},
		{"NotAnUpgrade", servicebus.WebSocketPath, "", true, http.StatusUpgradeRequired, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx(t), "GET", base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.plain {
				for k, v := range upgrade {
					req.Header.Set(k, v)
				}
			}
			if tc.protocols != "" {
				req.Header.Set("Sec-WebSocket-Protocol", tc.protocols)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want || resp.Header.Get("Sec-WebSocket-Protocol") != tc.wantProtocol {
				t.Errorf("status %d, subprotocol %q; want %d, %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Protocol"), tc.want, tc.wantProtocol)
			}
		})
	}

	t.Run("SASLHeaderAnswered", func(t *testing.T) {
		nc, proto := mustDialWebSocket(t, "ws"+strings.TrimPrefix(base, "http")+servicebus.WebSocketPath, "AMQPWSB10")
		if proto != "AMQPWSB10" {
			t.Fatalf("subprotocol %q", proto)
		}
		if _, err := nc.Write(codec.HeaderSASL[:]); err != nil {
			t.Fatal(err)
		}
		var h [8]byte
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(nc, h[:]); err != nil || h != codec.HeaderSASL {
			t.Fatalf("answer to the SASL header: %q %v", h, err)
		}
		// sasl-mechanisms follows, as on TCP.
		var fh [8]byte
		if _, err := io.ReadFull(nc, fh[:]); err != nil || fh[5] != 1 {
			t.Fatalf("the frame after the header: %x %v, want a SASL frame (type 1)", fh, err)
		}
	})

	t.Run("AMQP091HeaderRefused", func(t *testing.T) {
		nc, _ := mustDialWebSocket(t, "ws"+strings.TrimPrefix(base, "http")+servicebus.WebSocketPath, "AMQPWSB10")
		if _, err := nc.Write([]byte("AMQP\x00\x00\x09\x01")); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(nc)
		if string(got) != string(codec.HeaderAMQP[:]) {
			t.Fatalf("answer to an AMQP 0-9-1 header: %q %v, want AMQP 1.0's header and the end", got, err)
		}
	})
}

// issue 31.1: Close ends a WebSocket that has not sent its protocol header
// yet, and waits for its handler, as it ends and waits for a TCP
// connection's (docs/architecture.md: Close waits for every goroutine):
// the handler does not wait out the header's timeout.
func TestWebSocketCloseEndsAWebSocketBeforeItsHeader(t *testing.T) {
	f := MustServer(t)
	h := f.s.WebSocketHandler()
	returned := make(chan struct{}, 2)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	t.Cleanup(hs.Close)
	// The upgrade is answered once the server counts the connection.
	nc, _ := mustDialWebSocket(t, "ws"+strings.TrimPrefix(hs.URL, "http")+servicebus.WebSocketPath, "AMQPWSB10")
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.s.Close(c); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-returned:
	case <-c.Done():
		t.Fatal("the handler still waits for the header after Close")
	}
	// The server closed the WebSocket (NetConn reads its close as EOF).
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && websocket.CloseStatus(err) == -1 {
		t.Fatalf("the WebSocket after Close: %v, want the server's close", err)
	}
	// A closed server upgrades nothing.
	req, _ := http.NewRequestWithContext(ctx(t), "GET", hs.URL+servicebus.WebSocketPath, nil)
	for k, v := range map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "AMQPWSB10"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("an upgrade after Close: %d, want 503", resp.StatusCode)
	}
}

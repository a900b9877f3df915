package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
)

// wsClient returns an azservicebus client of the namespace at endpoint
// whose connections go over WebSockets (ClientOptions.NewWebSocketConn),
// offering subprotocol and trusting pool; each URL it dials is sent to
// dialed.
func wsClient(tb testing.TB, endpoint string, pool *x509.CertPool, subprotocol string, dialed chan<- string) *azservicebus.Client {
	tb.Helper()
	return wsClientTo(tb, sbKeyConnString(endpoint), "", pool, subprotocol, dialed)
}

// wsClientTo is wsClient with a connection string, and a WebSocket URL
// that, unless empty, the client dials instead of the one the SDK builds.
func wsClientTo(tb testing.TB, connString, url string, pool *x509.CertPool, subprotocol string, dialed chan<- string) *azservicebus.Client {
	tb.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	tb.Cleanup(tr.CloseIdleConnections)
	c, err := azservicebus.NewClientFromConnectionString(connString, &azservicebus.ClientOptions{
		RetryOptions: azservicebus.RetryOptions{MaxRetries: -1},
		NewWebSocketConn: func(ctx context.Context, args azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
			select {
			case dialed <- args.Host:
			default:
			}
			to := args.Host
			if url != "" {
				to = url
			}
			ws, _, err := websocket.Dial(ctx, to, &websocket.DialOptions{
				Subprotocols: []string{subprotocol}, HTTPClient: &http.Client{Transport: tr},
			})
			if err != nil {
				return nil, err
			}
			if ws.Subprotocol() != subprotocol {
				ws.CloseNow()
				return nil, errors.New("lapse chose the subprotocol " + ws.Subprotocol())
			}
			return websocket.NetConn(context.Background(), ws, websocket.MessageBinary), nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// issue 31.1: azservicebus's WebSocket transport, given a connection
// string without UseDevelopmentEmulator, dials
// wss://<endpoint>/$servicebus/websocket: on the AMQPS port (TLS, then an
// HTTP upgrade, where the administration API is too) and on the
// WebSocket port, both with lapse's one certificate, it sends and
// receives as over AMQPS. The administration API answers HTTPS on the
// WebSocket port too, as on the service's port 443.
func TestServiceBusOverWebSockets(t *testing.T) {
	m := MustStart(t)
	pool, _ := MustTrustLapse(t, m)
	for _, tc := range []struct{ listener, subprotocol string }{
		{"amqps", "AMQPWSB10"},
		{"servicebusWebSocket", "amqp"},
	} {
		t.Run(tc.listener, func(t *testing.T) {
			ctx := sbContext(t)
			_, port, _ := net.SplitHostPort(listenerAddr(t, m, tc.listener))
			endpoint := "localhost:" + port
			queue := strings.ToLower(tc.listener)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
			t.Cleanup(tr.CloseIdleConnections)
			adm, err := admin.NewClientFromConnectionString(sbKeyConnString(endpoint), &admin.ClientOptions{
				ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := adm.CreateQueue(ctx, queue, nil); err != nil {
				t.Fatalf("create a queue over HTTPS at %s: %v", endpoint, err)
			}

			dialed := make(chan string, 1)
			c := wsClient(t, endpoint, pool, tc.subprotocol, dialed)
			MustSBSend(t, c, queue, &azservicebus.Message{Body: []byte("over a WebSocket")})
			r, err := c.NewReceiverForQueue(queue, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close(context.Background())
			msgs, err := r.ReceiveMessages(ctx, 1, nil)
			if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "over a WebSocket" {
				t.Fatalf("receive over a WebSocket: %d messages, %v", len(msgs), err)
			}
			if err := r.CompleteMessage(ctx, msgs[0], nil); err != nil {
				t.Fatal(err)
			}
			if got, want := <-dialed, "wss://"+endpoint+"/$servicebus/websocket"; got != want {
				t.Errorf("the SDK dialed %s, want %s", got, want)
			}
		})
	}
}

// issue 31.1: the WebSocket port speaks TLS with the AMQPS certificate
// and upgrades only /$servicebus/websocket with an AMQP subprotocol; other
// requests there are the administration API's.
func TestServiceBusWebSocketRefusals(t *testing.T) {
	m := MustStart(t)
	pool, _ := MustTrustLapse(t, m)
	_, port, _ := net.SplitHostPort(listenerAddr(t, m, "servicebusWebSocket"))
	for _, tc := range []struct {
		name, path, protocol string
		want                 int
	}{
		{"Upgraded", "/$servicebus/websocket", "AMQPWSB10", http.StatusSwitchingProtocols},
		{"OtherSubprotocol", "/$servicebus/websocket", "mqtt", http.StatusBadRequest},
		{"NoSubprotocol", "/$servicebus/websocket", "", http.StatusBadRequest},
		{"OtherPath", "/$servicebus/websockets", "AMQPWSB10", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc2, err := tls.Dial("tcp", "127.0.0.1:"+port, &tls.Config{RootCAs: pool, ServerName: "localhost"})
			if err != nil {
				t.Fatalf("TLS with lapse's certificate: %v", err)
			}
			defer tc2.Close()
			tc2.SetDeadline(time.Now().Add(10 * time.Second))
			req := "GET " + tc.path + " HTTP/1.1\r\nHost: localhost:" + port + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
				"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
			if tc.protocol != "" {
				req += "Sec-WebSocket-Protocol: " + tc.protocol + "\r\n"
			}
			if _, err := tc2.Write([]byte(req + "\r\n")); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(tc2), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// issue 31.1: @azure/service-bus's WebSocket transport (webSocketOptions
// with the ws package), given the service's connection string with the
// AMQPS port or the WebSocket port and lapse's certificate through
// NODE_EXTRA_CA_CERTS, sends and receives over
// wss://localhost:<port>/$servicebus/websocket (subprotocol AMQPWSB10);
// its administration client reaches the same port over HTTPS.
func TestJSServiceBusOverWebSockets(t *testing.T) {
	node := clienttest.Node(t, sbJSDir, "@azure/service-bus", "ws")
	m := MustStart(t)
	for _, listener := range []string{"amqps", "servicebusWebSocket"} {
		t.Run(listener, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(listenerAddr(t, m, listener))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "testdata/js/servicebus_websocket.cjs")
			cmd.Env = append(os.Environ(),
				"NODE_PATH="+filepath.Join(sbJSDir, "node_modules"),
				"NODE_EXTRA_CA_CERTS="+MustCertFile(t, m),
				"SERVICEBUS_CONNECTION_STRING="+sbKeyConnString("localhost:"+port),
				"SERVICEBUS_QUEUE="+strings.ToLower(listener))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s\n%s", err, out, stderr.Bytes())
			}
			type dial struct {
				URL       string
				Protocols []string
			}
			type result struct {
				Bodies              []string
				ActiveAfterComplete int
				Dialed              []dial
			}
			var got result
			if err := json.Unmarshal(clienttest.LastLine(out), &got); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			want := result{Bodies: []string{"over a WebSocket"},
				Dialed: []dial{{URL: "wss://localhost:" + port + "/$servicebus/websocket", Protocols: []string{"AMQPWSB10"}}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// issue 31.1: azure-servicebus's WebSocket transport
// (TransportType.AmqpOverWebsocket, with websocket-client for the sync
// client and aiohttp for the asyncio one), given the service's connection
// string and custom_endpoint_address with the AMQPS port or the WebSocket
// port and lapse's certificate, sends and receives over
// wss://localhost:<port>/$servicebus/websocket; its administration client
// reaches the same port over HTTPS.
func TestPython7ServiceBusOverWebSockets(t *testing.T) {
	python := clienttest.PythonSDK(t, "import azure.servicebus as s, websocket, aiohttp; v = tuple(map(int, s.__version__.split('.')[:2])); assert (7, 12) <= v < (8, 0)")
	m := MustStart(t)
	cert := MustCertFile(t, m)
	for _, listener := range []string{"amqps", "servicebusWebSocket"} {
		t.Run(listener, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(listenerAddr(t, m, listener))
			env := []string{
				"SERVICEBUS_CONNECTION_STRING=" + sbKeyConnString("localhost:"+port),
				"SERVICEBUS_ENDPOINT=sb://localhost:" + port,
				"LAPSE_CERT=" + cert,
			}
			line := runPythonIn(t, python7Dir, python, "over_websockets.py", env, strings.ToLower(listener))
			type result struct {
				Sync, Asyncio []string
				Left          int
			}
			var got result
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			want := result{Sync: []string{"sync over a WebSocket"}, Asyncio: []string{"asyncio over a WebSocket"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// issue 31.1 with 29.2: a connection over a WebSocket signed with a
// sandbox's key name is served by that sandbox, as one over TCP is: the
// message sent over the WebSocket port is in the sandbox's queue, not in
// the default world's.
func TestSandbox_ServiceBusKeyNameRoutesWebSockets(t *testing.T) {
	m := MustStart(t, "--servicebus-config", "../examples/config/Config.json")
	pool, _ := MustTrustLapse(t, m)
	cfg, err := os.ReadFile("../examples/config/Config.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"servicebusConfig": json.RawMessage(cfg)})
	sb := mustSandbox(t, m, string(body))
	url := "wss://localhost:" + portOf(t, listenerAddr(t, m, "servicebusWebSocket")) + "/$servicebus/websocket"
	MustSBSend(t, wsClientTo(t, sb.ServiceBus.ConnectionString, url, pool, "AMQPWSB10", nil), "orders",
		&azservicebus.Message{Body: []byte("to the sandbox")})
	box, err := azservicebus.NewClientFromConnectionString(sb.ServiceBus.ConnectionString, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close(context.Background()) })
	if got := sbPeek(t, box, "orders", 0); len(got) != 1 || got[0] != "to the sandbox" {
		t.Errorf("the sandbox's queue: %q", got)
	}
	if got := sbPeek(t, MustSBClient(t, m), "orders", 0); len(got) != 0 {
		t.Errorf("the default world's queue: %q", got)
	}
}

package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/lapse-emulator/lapse/dashboard"
	amqp "github.com/rabbitmq/amqp091-go"
)

// parseBanner returns the rows of a start-up banner by label, a row's
// continuation lines after it.
func parseBanner(banner string) map[string][]string {
	rows := map[string][]string{}
	last := ""
	for _, line := range strings.Split(banner, "\n") {
		if len(line) < 17 || !strings.HasPrefix(line, "  ") {
			continue
		}
		if label := strings.TrimSpace(line[2:15]); label != "" {
			last = label
		}
		rows[last] = append(rows[last], line[16:])
	}
	return rows
}

// portOf is the port of a host:port or of a URL.
func portOf(tb testing.TB, s string) string {
	tb.Helper()
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return port
}

// issue 15.4: once every listener is bound, Main.Banner, which lapse serve
// prints, is one block a person reads: the dashboard, the Service Bus
// connection string, the RabbitMQ URL, the Cosmos DB endpoint, key and
// certificate, the data folder and the clock, with the ports bound (every
// port here is :0). Each endpoint printed answers its protocol's client.
func TestBannerShowsTheBoundEndpointsAndEachAnswers(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	m := MustStart(t, "--data", data, "--clock", "frozen")
	banner := m.Banner()
	if !strings.HasPrefix(banner, "\nlapse dev is ready (Ctrl-C stops it).\n\n") {
		t.Errorf("banner starts %q", banner)
	}
	t.Logf("banner:%s", banner)
	rows := parseBanner(banner)
	value := func(label string, i int, prefix string) string {
		t.Helper()
		if len(rows[label]) <= i || !strings.HasPrefix(rows[label][i], prefix) {
			t.Fatalf("banner row %s (line %d) does not start with %q: %q", label, i, prefix, rows[label])
		}
		return strings.TrimPrefix(rows[label][i], prefix)
	}
	dashboardURL := value("Dashboard", 0, "http://localhost:")
	dashboardURL = "http://localhost:" + dashboardURL
	sbConn := value("Service Bus", 0, "Endpoint=sb://localhost:")
	sbConn = "Endpoint=sb://localhost:" + sbConn
	sbAdmin := value("Service Bus", 1, "administration: http://")
	sbWebSocket, ok := strings.CutSuffix(value("Service Bus", 2, "WebSockets: wss://"), "/$servicebus/websocket")
	if !ok {
		t.Errorf("the WebSocket URL does not end with /$servicebus/websocket: %s", sbWebSocket)
	}
	rabbitURL := "amqp://" + value("RabbitMQ", 0, "amqp://")
	mgmt, _, _ := strings.Cut(value("RabbitMQ", 1, "management: "), " ")
	cosmosURL := "https://" + value("Cosmos DB", 0, "https://")
	key := value("Cosmos DB", 1, "key: ")
	certURL, amqps, _ := strings.Cut(value("Cosmos DB", 2, "certificate: "), " (also AMQPS's, on ")
	amqps = strings.TrimSuffix(amqps, ")")
	if got := value("Data", 0, ""); got != data {
		t.Errorf("Data: %q, want %q", got, data)
	}
	advance := value("Clock", 0, "frozen; move it with: ")

	// The ports printed are those bound, as GET /api/info reports them.
	var info dashboard.Info
	resp, err := http.Get(dashboardURL + "api/info")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sbHostPort := strings.TrimPrefix(strings.Split(sbConn, ";")[0], "Endpoint=sb://")
	for name, printed := range map[string]string{
		"control": dashboardURL, "amqp": sbHostPort, "servicebusAdmin": "http://" + sbAdmin,
		"servicebusWebSocket": "https://" + sbWebSocket,
		"rabbitmqManagement":  mgmt, "cosmos": cosmosURL, "amqps": amqps,
	} {
		if want := portOf(t, info.Listeners[name].Addr); portOf(t, printed) != want {
			t.Errorf("%s: printed %s, bound port %s", name, printed, want)
		}
	}
	if portOf(t, rabbitURL) != portOf(t, sbHostPort) {
		t.Errorf("RabbitMQ URL %s is not on the AMQP port %s", rabbitURL, sbHostPort)
	}

	ctx := sbContext(t)
	// The dashboard and the certificate.
	resp, err = http.Get(certURL)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	pool := x509.NewCertPool()
	if err != nil || resp.StatusCode != 200 || !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("GET %s: %d %v %q", certURL, resp.StatusCode, err, pem)
	}

	// Service Bus: a queue made through the administration address, then a
	// message sent and received with the connection string.
	adm := mustSBAdminAt(t, strings.TrimSuffix(sbAdmin, "/"))
	if _, err := adm.CreateQueue(ctx, "banner", &admin.CreateQueueOptions{}); err != nil {
		t.Fatal(err)
	}
	sb, err := azservicebus.NewClientFromConnectionString(sbConn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(context.Background())
	MustSBSend(t, sb, "banner", &azservicebus.Message{Body: []byte("hello")})
	recv, err := sb.NewReceiverForQueue("banner", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close(context.Background())
	if msgs, err := recv.ReceiveMessages(ctx, 1, nil); err != nil || len(msgs) != 1 || string(msgs[0].Body) != "hello" {
		t.Errorf("Service Bus receive: %v %v", msgs, err)
	}

	// RabbitMQ and its management API.
	conn, err := amqp.Dial(rabbitURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("banner", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", mgmt+"api/queues/%2F/banner", nil)
	req.SetBasicAuth("guest", "guest")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("GET %s: %v %v", req.URL, resp, err)
	} else {
		resp.Body.Close()
	}

	// Cosmos DB over HTTPS with the key and the certificate printed.
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	cc, err := azcosmos.NewClientWithKey(cosmosURL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "banner"}, nil); err != nil {
		t.Errorf("Cosmos DB create database: %v", err)
	}

	// AMQPS with the same certificate.
	tc, err := tls.Dial("tcp", amqps, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		t.Errorf("AMQPS %s: %v", amqps, err)
	} else {
		tc.Close()
	}

	// The clock's command as printed, for the control port bound.
	if want := "lapse clock advance 15m --control-url " + strings.TrimSuffix(dashboardURL, "/"); advance != want {
		t.Errorf("Clock: %q, want %q", advance, want)
	}
}

// issue 15.4: the connection string is the official emulator's on AMQP's
// port, and names any other port.
func TestBannerServiceBusConnectionString(t *testing.T) {
	for hostport, want := range map[string]string{
		"localhost:5672": "Endpoint=sb://localhost;",
		"localhost:5673": "Endpoint=sb://localhost:5673;",
		"[::1]:5672":     "Endpoint=sb://[::1];",
		"10.0.0.1:5672":  "Endpoint=sb://10.0.0.1;",
	} {
		if got := serviceBusConnectionString(hostport); !strings.HasPrefix(got, want) ||
			!strings.HasSuffix(got, ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;") {
			t.Errorf("%s: %q", hostport, got)
		}
	}
	for addr, want := range map[string]string{"[::]:8080": "localhost:8080", "0.0.0.0:1": "localhost:1", "127.0.0.1:2": "127.0.0.1:2", "[::1]:3": "[::1]:3"} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostPort(a); got != want {
			t.Errorf("hostPort(%s): %q, want %q", addr, got, want)
		}
	}
}

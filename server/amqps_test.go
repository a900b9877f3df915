package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	goamqp "github.com/Azure/go-amqp"
	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/clienttest"
	"github.com/lapse-emulator/lapse/dashboard"
	amqp "github.com/rabbitmq/amqp091-go"
)

// sbKeyConnString is a connection string without UseDevelopmentEmulator,
// as SDKs without emulator support and production code have it.
func sbKeyConnString(hostport string) string {
	return "Endpoint=sb://" + hostport + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;"
}

// MustTrustLapse downloads the certificate from m's control port at
// GET /cert.pem, as users do, and returns a pool that trusts it.
func MustTrustLapse(tb testing.TB, m *Main) (*x509.CertPool, []byte) {
	tb.Helper()
	resp, err := http.Get(controlURL(m) + "/cert.pem")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	certPEM, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /cert.pem: %d %v", resp.StatusCode, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		tb.Fatalf("GET /cert.pem served no certificate: %q", certPEM)
	}
	return pool, certPEM
}

// listenerAddr is the dialable address of one of m's listeners, as GET
// /api/info reports it.
func listenerAddr(tb testing.TB, m *Main, name string) string {
	tb.Helper()
	var info dashboard.Info
	MustAPI(tb, m).get("/api/info", &info)
	l, ok := info.Listeners[name]
	if !ok || !l.Served {
		tb.Fatalf("/api/info: listener %q: %+v", name, info.Listeners)
	}
	return dialable(l.Addr)
}

// issue 13.5: azservicebus without UseDevelopmentEmulator dials AMQPS and
// checks the server's certificate; its admin client builds https:// URLs.
// With one connection string naming the AMQPS port, both work with only
// lapse's certificate trusted (the AMQPS port passes HTTPS requests to the
// administration API, which also answers HTTPS on its own port), and a
// message sent over TLS is received over plain AMQP.
func TestServiceBusOverTLS(t *testing.T) {
	m := MustStart(t)
	pool, _ := MustTrustLapse(t, m)
	ctx := sbContext(t)
	amqps := listenerAddr(t, m, "amqps")
	_, port, _ := net.SplitHostPort(amqps)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	for i, endpoint := range []string{"localhost:" + port, listenerAddr(t, m, "servicebusAdmin")} {
		adm, err := admin.NewClientFromConnectionString(sbKeyConnString(endpoint), &admin.ClientOptions{
			ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := adm.CreateQueue(ctx, []string{"orders", "other"}[i], nil); err != nil {
			t.Fatalf("create a queue over HTTPS at %s: %v", endpoint, err)
		}
	}

	// "localhost", a name of the certificate, so the SDK checks it. The
	// SDK takes the endpoint's host and port as the TLS server name, so the
	// test's random port needs ServerName; on 5671 the endpoint has none.
	c, err := azservicebus.NewClientFromConnectionString(sbKeyConnString("localhost:"+port),
		&azservicebus.ClientOptions{TLSConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	s, err := c.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("over TLS")}, nil); err != nil {
		t.Fatalf("send over AMQPS: %v", err)
	}
	if got := sbPeek(t, MustSBClient(t, m), "orders", 0); !slices.Equal(got, []string{"over TLS"}) {
		t.Fatalf("peeked on the plain port: %q", got)
	}

	// A client that does not trust lapse's certificate is refused.
	untrusted, err := azservicebus.NewClientFromConnectionString(sbKeyConnString("localhost:"+port),
		&azservicebus.ClientOptions{TLSConfig: &tls.Config{RootCAs: x509.NewCertPool(), ServerName: "localhost"}, RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer untrusted.Close(context.Background())
	us, err := untrusted.NewSender("orders", nil)
	if err == nil {
		err = us.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	}
	// go-amqp keeps only the text of the TLS error.
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("a client without lapse's certificate: %v, want an unknown-authority error", err)
	}
}

// issue 31.3: an SDK that always dials TLS (azservicebus without
// UseDevelopmentEmulator, as every azservicebus before 1.7 did) given the
// plain AMQP port's endpoint: the port sniffs the TLS handshake, and the
// client sends and receives there over TLS with only lapse's certificate
// trusted. Before issue 27's sniff the ClientHello was read as a protocol
// header and refused.
func TestServiceBusSDKOverTLSOnTheAMQPPort_Issue31_3(t *testing.T) {
	m := MustStart(t)
	pool, _ := MustTrustLapse(t, m)
	ctx := sbContext(t)
	_, port, _ := net.SplitHostPort(listenerAddr(t, m, "amqp"))
	c, err := azservicebus.NewClientFromConnectionString(sbKeyConnString("localhost:"+port),
		&azservicebus.ClientOptions{TLSConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}, RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := MustSBAdmin(t, m).CreateQueue(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("over TLS on 5672")}, nil); err != nil {
		t.Fatalf("send over TLS to the AMQP port: %v", err)
	}
	r, err := c.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "over TLS on 5672" {
		t.Fatalf("receive over TLS from the AMQP port: %v %v", msgs, err)
	}
	if err := r.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatal(err)
	}
}

// issue 13.5: the AMQPS port serves AMQP 0-9-1 too, as RabbitMQ's TLS
// listener does: amqp091-go over TLS publishes, and a consumer on the plain
// port gets the message.
func TestRabbitMQOverTLS(t *testing.T) {
	m := MustStart(t)
	pool, _ := MustTrustLapse(t, m)
	_, port, _ := net.SplitHostPort(listenerAddr(t, m, "amqps"))
	tlsConn, err := amqp.DialConfig("amqps://guest:guest@localhost:"+port+"/", amqp.Config{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		Properties:      amqp.Table{"connection_name": "over TLS"},
	})
	if err != nil {
		t.Fatalf("amqp091-go over TLS: %v", err)
	}
	defer tlsConn.Close()
	// The management API shows it as a TLS connection.
	req, _ := http.NewRequest("GET", "http://"+listenerAddr(t, m, "rabbitmqManagement")+"/api/connections", nil)
	req.SetBasicAuth("guest", "guest")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var conns []map[string]any
	json.NewDecoder(resp.Body).Decode(&conns)
	resp.Body.Close()
	if len(conns) != 1 || conns[0]["user_provided_name"] != "over TLS" || conns[0]["ssl"] != true || conns[0]["ssl_protocol"] != "tlsv1.3" {
		t.Errorf("/api/connections: %v", conns)
	}
	ch, err := tlsConn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("tls", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Publish("", "tls", false, false, amqp.Publishing{Body: []byte("over TLS")}); err != nil {
		t.Fatal(err)
	}
	plain, err := amqp.Dial("amqp://guest:guest@" + dialable(m.amqp.Addr().String()) + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	pch, err := plain.Channel()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, ok, err := pch.Get("tls", true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if string(d.Body) != "over TLS" {
				t.Fatalf("got %q", d.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the message published over TLS never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// issue 13.4: a plain AMQP 1.0 header, without SASL, reaches the Service
// Bus front-end (go-amqp without a SASL mechanism sends "AMQP" 0 1 0 0),
// and each kind of header gets its answer on the real port.
func TestAMQPPortRoutesEveryHeader(t *testing.T) {
	m := MustStart(t)
	addr := dialable(m.amqp.Addr().String())
	ctx := sbContext(t)
	conn, err := goamqp.Dial(ctx, "amqp://"+addr, nil)
	if err != nil {
		t.Fatalf("AMQP 1.0 without SASL: %v", err)
	}
	if _, err := conn.NewSession(ctx, nil); err != nil {
		t.Fatalf("a session without SASL: %v", err)
	}
	conn.Close()

	h := func(b ...byte) []byte { return append([]byte("AMQP"), b...) }
	for _, tc := range []struct {
		name   string
		header []byte
		// want is the start of the answer: a header, or a frame's first bytes.
		want []byte
		// closes: the server closes after want.
		closes bool
	}{
		// connection.start on channel 0 (frame type 1, channel 0).
		{"AMQP091", h(0, 0, 9, 1), []byte{1, 0, 0}, false},
		{"AMQP09", h(1, 1, 0, 9), []byte{1, 0, 0}, false},
		{"AMQP10", h(0, 1, 0, 0), h(0, 1, 0, 0), false},
		{"AMQP10SASL", h(3, 1, 0, 0), h(3, 1, 0, 0), false},
		{"AMQP10TLSUpgrade", h(2, 1, 0, 0), h(3, 1, 0, 0), true},
		{"AMQP08", h(1, 1, 8, 0), h(0, 0, 9, 1), true},
		{"AMQP010", h(1, 1, 0, 10), h(0, 0, 9, 1), true},
		{"Garbage", []byte("GET / HT"), h(0, 0, 9, 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := nc.Write(tc.header); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(tc.want))
			if _, err := io.ReadFull(nc, got); err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("answer % x, want % x", got, tc.want)
			}
			if tc.closes {
				if n, err := nc.Read(make([]byte, 1)); err != io.EOF {
					t.Fatalf("after the answer: %d bytes, %v; want the connection closed", n, err)
				}
			}
		})
	}
}

// issue 13.5: one certificate for the whole emulator: GET /cert.pem on the
// control port, the Cosmos DB port's /_explorer/emulator.pem and what the
// AMQPS and administration ports present are the same certificate; it
// covers --cert-hosts, survives a restart, and is made anew (covering the
// new name) when --cert-hosts grows.
func TestOneCertificateForEveryTLSListener(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	m := MustStart(t, "--data", data, "--cert-hosts", "lapse, ci-runner.internal,10.1.2.3")
	_, certPEM := MustTrustLapse(t, m)
	cert := parsePEMCert(t, certPEM)
	if want := []string{"localhost", "lapse", "ci-runner.internal"}; !slices.Equal(cert.DNSNames, want) {
		t.Errorf("DNS names %q, want %q", cert.DNSNames, want)
	}
	for _, h := range []string{"lapse", "ci-runner.internal", "10.1.2.3", "127.0.0.1", "::1", "localhost"} {
		if err := cert.VerifyHostname(h); err != nil {
			t.Errorf("the certificate does not cover %s: %v", h, err)
		}
	}

	resp, err := http.Get("http://" + dialable(m.Cosmos.Addr().String()) + "/_explorer/emulator.pem")
	if err != nil {
		t.Fatal(err)
	}
	cosmosPEM, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(cosmosPEM, certPEM) {
		t.Error("the Cosmos DB port serves another certificate than /cert.pem")
	}
	for _, l := range []string{"amqps", "servicebusAdmin", "cosmos"} {
		if got := presented(t, listenerAddr(t, m, l)); !got.Equal(cert) {
			t.Errorf("%s presents another certificate", l)
		}
	}

	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	m2 := MustStart(t, "--data", data, "--cert-hosts", "lapse,ci-runner.internal,10.1.2.3")
	if _, again := MustTrustLapse(t, m2); !bytes.Equal(again, certPEM) {
		t.Error("the certificate changed across a restart")
	}
	if err := m2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	m3 := MustStart(t, "--data", data, "--cert-hosts", "lapse,broker")
	_, renewed := MustTrustLapse(t, m3)
	if bytes.Equal(renewed, certPEM) {
		t.Fatal("a certificate that does not cover --cert-hosts was kept")
	}
	if err := parsePEMCert(t, renewed).VerifyHostname("broker"); err != nil {
		t.Error(err)
	}
}

// A data folder of an earlier lapse keeps its certificate as the Cosmos DB
// port's (cosmos-cert.pem): it is moved and served, not replaced, since
// users already trust it.
func TestLegacyCosmosCertificateIsKept(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	m := MustStart(t, "--data", data)
	_, certPEM := MustTrustLapse(t, m)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{certFile, keyFile} {
		if err := os.Rename(filepath.Join(data, name), filepath.Join(data, legacyCertFiles[i])); err != nil {
			t.Fatal(err)
		}
	}
	m2 := MustStart(t, "--data", data)
	if _, again := MustTrustLapse(t, m2); !bytes.Equal(again, certPEM) {
		t.Fatal("the certificate of an older data folder was replaced")
	}
	if _, err := os.Stat(filepath.Join(data, legacyCertFiles[0])); err == nil {
		t.Error("the old certificate file is still there")
	}
}

func parsePEMCert(tb testing.TB, certPEM []byte) *x509.Certificate {
	tb.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		tb.Fatalf("not PEM: %q", certPEM)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// presented is the certificate a TLS listener at addr presents.
func presented(tb testing.TB, addr string) *x509.Certificate {
	tb.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		tb.Fatalf("TLS to %s: %v", addr, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0]
}

// issue 13.5: @azure/service-bus with the service's connection string
// (no UseDevelopmentEmulator) and lapse's certificate trusted through
// NODE_EXTRA_CA_CERTS: its AMQP and administration clients both reach the
// AMQPS port.
func TestJSServiceBusOverTLS(t *testing.T) {
	node := clienttest.Node(t, sbJSDir, "@azure/service-bus")
	m := MustStart(t)
	_, port, _ := net.SplitHostPort(listenerAddr(t, m, "amqps"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/js/servicebus_tls.cjs")
	cmd.Env = append(os.Environ(),
		"NODE_PATH="+filepath.Join(sbJSDir, "node_modules"),
		"NODE_EXTRA_CA_CERTS="+MustCertFile(t, m),
		"SERVICEBUS_CONNECTION_STRING="+sbKeyConnString("localhost:"+port))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	type result struct {
		Bodies              []string
		MessageIDs          []bool `json:"messageIds"`
		DeliveryCounts      []int
		ActiveAfterComplete int
	}
	var got result
	if err := json.Unmarshal(clienttest.LastLine(out), &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	// issue 13.1 and 13.2 as JS sees them: a message-id of lapse's, and
	// deliveryCount 0 on the first delivery.
	want := result{Bodies: []string{"over TLS"}, MessageIDs: []bool{true}, DeliveryCounts: []int{0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// sbJSDir is the npm folder of the Service Bus JS tests, whose
// @azure/service-bus the TLS test uses.
const sbJSDir = "../servicebus/jstest"

// issue 27: azure-servicebus 7.15's administration client, given the
// emulator's connection string (UseDevelopmentEmulator=true, the endpoint
// the AMQP port), sends https://host:port/ requests to the AMQP port. The
// plain AMQP port takes a connection that opens with a TLS handshake and
// hands its HTTP requests to the administration API, which creates the
// queue; an AMQP 1.0 header over that TLS is still served, and the plain
// AMQP header still goes to Service Bus. Before, the TLS ClientHello was
// read as a protocol header and refused with 0-9-1's, so the handshake
// failed.
func TestAMQPPortServesAdministrationOverTLS(t *testing.T) {
	m := MustStart(t)
	pool, _ := MustTrustLapse(t, m)
	amqpAddr := listenerAddr(t, m, "amqp")
	_, port, _ := net.SplitHostPort(amqpAddr)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	adm, err := admin.NewClientFromConnectionString(sbKeyConnString("localhost:"+port)+"UseDevelopmentEmulator=true;", &admin.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}, Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateQueue(sbContext(t), "orders", nil); err != nil {
		t.Fatalf("create a queue over HTTPS on the AMQP port %s: %v", amqpAddr, err)
	}

	// The AMQP 1.0 SASL header over TLS on the same port: answered with
	// the SASL header, as on the AMQPS port.
	c, err := tls.Dial("tcp", "localhost:"+port, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte{'A', 'M', 'Q', 'P', 3, 1, 0, 0}); err != nil {
		t.Fatal(err)
	}
	var h [8]byte
	if _, err := io.ReadFull(c, h[:]); err != nil || h != [8]byte{'A', 'M', 'Q', 'P', 3, 1, 0, 0} {
		t.Fatalf("AMQP 1.0 over TLS on the AMQP port: %q %v, want the SASL header", h, err)
	}

	// Plain AMQP on the port is as before.
	if got := sbPeek(t, MustSBClient(t, m), "orders", 0); len(got) != 0 {
		t.Fatalf("peeked %q on the plain port, want an empty queue", got)
	}
}

//go:build linux

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/lapse-emulator/lapse/cosmos"
	amqp "github.com/rabbitmq/amqp091-go"
)

// imageTrust downloads the certificate the image's lapse made in /data
// (GET /cert.pem on the control port) and returns a pool that trusts it.
func imageTrust(ctx context.Context, t *testing.T, control string) *x509.CertPool {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+control+"/cert.pem", nil)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	pemBytes, _ := io.ReadAll(resp.Body)
	pool := x509.NewCertPool()
	if resp.StatusCode != http.StatusOK || !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("GET /cert.pem: %s %q", resp.Status, pemBytes)
	}
	return pool
}

// imageCertificate: AMQPS and Cosmos DB's HTTPS serve the certificate of
// /cert.pem, for 127.0.0.1.
func imageCertificate(ctx context.Context, t *testing.T, ports map[string]string) {
	pool := imageTrust(ctx, t, ports["8080"])
	for _, p := range []string{"5671", "8081"} {
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}
		c, err := d.DialContext(ctx, "tcp", ports[p])
		if err != nil {
			t.Errorf("TLS on port %s: %v", p, err)
			continue
		}
		c.Close()
	}
}

// imageServiceBus: azservicebus sends to and receives from the queue
// "orders" of Config.json over AMQP 1.0.
func imageServiceBus(ctx context.Context, t *testing.T, addr string) {
	client, err := azservicebus.NewClientFromConnectionString("Endpoint=sb://"+addr+";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	sender, err := client.NewSender("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(context.Background())
	if err := sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("from scratch")}, nil); err != nil {
		t.Fatalf("send: %v", err)
	}
	receiver, err := client.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close(context.Background())
	msgs, err := receiver.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "from scratch" {
		t.Fatalf("receive: %v %v", msgs, err)
	}
	if err := receiver.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Errorf("complete: %v", err)
	}
}

// imageRabbitMQ: amqp091-go publishes to the queue "orders" of
// definitions.json with a confirm and gets it back over AMQP 0-9-1.
func imageRabbitMQ(ctx context.Context, t *testing.T, addr string) {
	conn, err := amqp.Dial("amqp://guest:guest@" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "orders", true, false, amqp.Publishing{Body: []byte("from scratch"), DeliveryMode: amqp.Persistent})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := confirm.WaitContext(ctx); !ok || err != nil {
		t.Fatalf("publish not confirmed: %v", err)
	}
	d, ok, err := ch.Get("orders", false)
	if err != nil || !ok || string(d.Body) != "from scratch" {
		t.Fatalf("get: %q %v %v", d.Body, ok, err)
	}
	if err := d.Ack(false); err != nil {
		t.Error(err)
	}
}

// imageCosmos: azcosmos creates and reads an item of shop/carts
// (cosmos.json) over HTTPS, trusting lapse's certificate.
func imageCosmos(ctx context.Context, t *testing.T, addr, control string) {
	cred, err := azcosmos.NewKeyCredential(cosmos.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: imageTrust(ctx, t, control)}}
	defer tr.CloseIdleConnections()
	client, err := azcosmos.NewClientWithKey("https://"+addr+"/", cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	carts, err := client.NewContainer("shop", "carts")
	if err != nil {
		t.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("u1")
	if _, err := carts.CreateItem(ctx, pk, []byte(`{"id":"c1","userId":"u1"}`), nil); err != nil {
		t.Fatalf("create: %v", err)
	}
	resp, err := carts.ReadItem(ctx, pk, "c1", nil)
	if err != nil || !strings.Contains(string(resp.Value), `"userId":"u1"`) {
		t.Fatalf("read: %v %s", err, resp.Value)
	}
	var re *azcore.ResponseError
	if _, err := carts.ReadItem(ctx, pk, "nope", nil); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("read of a missing item: %v, want 404", err)
	}
}

// imageManagement: the Service Bus administration port's GET /health and
// the RabbitMQ management API answer.
func imageManagement(ctx context.Context, t *testing.T, sbAdmin, rabbitMgmt string) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, u := range []string{"http://" + sbAdmin + "/health", "http://" + rabbitMgmt + "/api/overview"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		req.SetBasicAuth("guest", "guest")
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("GET %s: %v", u, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", u, resp.Status)
		}
	}
}

//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The wrong credentials of TestBadInputOnEveryListener (badinput_test.go).

// badinputAuthCases are the wrong credentials, sent with the real clients
// where they can send them: each is refused as the real service refuses
// it.
func badinputAuthCases(l *Lapse, cfg *tls.Config) []badinputCase {
	rabbitRefused := func(t *testing.T, err error) {
		t.Helper()
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.AccessRefused {
			t.Errorf("login with a wrong password: %v, want 403 ACCESS_REFUSED", err)
		}
	}
	wrongURL := "amqp://guest:wrong@" + l.Addrs["amqp"] + "/"
	cosmosRaw := func(t *testing.T, date string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", l.CosmosEndpoint()+"dbs/badinput", nil)
		if date != "" {
			req.Header.Set("x-ms-date", date)
		}
		req.Header.Set("x-ms-version", "2020-07-15")
		req.Header.Set("Authorization", badinputCosmosAuth(CosmosKey, "get", "dbs", "dbs/badinput", date))
		resp, err := (&http.Client{Transport: badinputTransport(t, cfg), Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	return []badinputCase{
		{"amqp/0-9-1/WrongPasswordPLAIN", func(t *testing.T) {
			_, err := amqp.Dial(wrongURL)
			rabbitRefused(t, err)
		}},
		{"amqp/0-9-1/WrongPasswordAMQPLAIN", func(t *testing.T) {
			_, err := amqp.DialConfig(wrongURL, amqp.Config{SASL: []amqp.Authentication{&amqp.AMQPlainAuth{Username: "guest", Password: "wrong"}}})
			rabbitRefused(t, err)
		}},
		{"amqps/0-9-1/WrongPasswordPLAIN", func(t *testing.T) {
			_, err := amqp.DialTLS("amqps://guest:wrong@"+l.Addrs["amqps"]+"/", cfg)
			rabbitRefused(t, err)
		}},
		{"amqp/1.0/CBSTokenSignedWithAnotherKey", func(t *testing.T) {
			conn := strings.Replace(l.ServiceBusConnectionString(), "SharedAccessKey=SAS_KEY_VALUE", "SharedAccessKey=another key", 1)
			c, err := azservicebus.NewClientFromConnectionString(conn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			s, err := c.NewSender("good", nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = s.SendMessage(ctx, &azservicebus.Message{Body: []byte("refused")}, nil)
			var se *azservicebus.Error
			if !errors.As(err, &se) || se.Code != azservicebus.CodeUnauthorizedAccess || !strings.Contains(err.Error(), "401") {
				t.Errorf("send with a token signed by another key: %v, want unauthorized (put-token 401)", err)
			}
		}},
		{"servicebusAdmin/TokenSignedWithAnotherKey", func(t *testing.T) {
			c := badinputDial(t, l.Addrs["servicebusAdmin"], nil)
			req := "GET /good HTTP/1.1\r\nHost: lapse\r\nAuthorization: " + badinputSAS("another key", "http://lapse/") + "\r\n\r\n"
			if status, body := badinputAnswer(t, c, []byte(req), nil, false); status != 401 || !strings.Contains(body, "InvalidSignature") {
				t.Errorf("status %d %q, want 401 InvalidSignature", status, body)
			}
		}},
		{"rabbitmqManagement/WrongPassword", func(t *testing.T) {
			c := badinputDial(t, l.Addrs["rabbitmqManagement"], nil)
			req := "GET /api/overview HTTP/1.1\r\nHost: lapse\r\nAuthorization: Basic Z3Vlc3Q6d3Jvbmc=\r\n\r\n" // guest:wrong
			if status, _ := badinputAnswer(t, c, []byte(req), nil, false); status != 401 {
				t.Errorf("status %d, want 401", status)
			}
		}},
		{"cosmosHTTPS/WrongKey", func(t *testing.T) {
			other := "dGhpcyBpcyBub3QgdGhlIGtleSBvZiB0aGUgYWNjb3VudCBsYXBzZSBrZWVwcyBvayE="
			db, err := badinputCosmosClient(t, l, other, badinputTransport(t, cfg)).NewDatabase("badinput")
			if err != nil {
				t.Fatal(err)
			}
			// azcosmos reads the account first, and wraps that
			// answer in an error of its own.
			_, err = db.Read(context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), "RESPONSE 401") || !strings.Contains(err.Error(), "The input authorization token can't serve the request") {
				t.Errorf("read with another key: %v, want 401 Unauthorized", err)
			}
		}},
		{"cosmosHTTPS/MissingDate", func(t *testing.T) {
			if status, body := cosmosRaw(t, ""); status != 401 || !strings.Contains(body, "x-ms-date") {
				t.Errorf("status %d %q, want 401 naming x-ms-date", status, body)
			}
		}},
		{"cosmosHTTPS/StaleDate", func(t *testing.T) {
			stale := time.Now().Add(-20 * time.Minute).UTC().Format(http.TimeFormat)
			// An expired token: the service's 403, not a 401.
			if status, body := cosmosRaw(t, stale); status != 403 || !strings.Contains(body, "not valid at the current time") {
				t.Errorf("status %d %q, want 403: not valid at the current time", status, body)
			}
		}},
	}
}

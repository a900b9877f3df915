package cosmos_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/lapse-emulator/lapse/cosmos"
)

func TestWrongOrMissingCredentialsAre401(t *testing.T) {
	f := MustServer(t)
	f.MustDatabase("db")
	other := "dGhpcyBpcyBub3QgdGhlIGtleSB0aGlzIGlzIG5vdCB0aGUga2V5IHRoaXMgaXMgbm90IHRoZSBrZXk="
	_, err := f.newClient(other).CreateDatabase(context.Background(), azcosmos.DatabaseProperties{ID: "x"}, nil)
	// azcosmos reads the account first, and wraps its error without its
	// type: the status is in the text.
	if err == nil || !strings.Contains(err.Error(), "RESPONSE 401") || !strings.Contains(err.Error(), "The input authorization token can't serve the request") {
		t.Fatalf("another key: %v", err)
	}
	for name, r := range map[string]restResponse{
		"NoAuthorization": f.doWith("", time.Now(), "GET", "/dbs", "dbs", "", nil, nil),
		"WrongLink":       f.do("GET", "/dbs/db", "dbs", "dbs/other", nil, nil),
		"ReadAnItem":      f.doWith(other, time.Now(), "GET", "/dbs/db", "dbs", "dbs/db", nil, nil),
	} {
		if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), `"code":"Unauthorized"`) {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// A token whose date is too far from the server's clock has expired:
	// the service's 403, which says the token's window and the time.
	for name, d := range map[string]time.Duration{"StaleDate": -20 * time.Minute, "FutureDate": 20 * time.Minute} {
		date := time.Now().Add(d).UTC()
		r := f.doWith(cosmos.EmulatorKey, date, "GET", "/dbs", "dbs", "", nil, nil)
		want := "The authorization token is not valid at the current time. Please create another token and retry (token start time: " +
			date.Format(http.TimeFormat) + ", token expiry time: " + date.Add(15*time.Minute).Format(http.TimeFormat) + ", current server time: "
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), `"code":"Forbidden"`) || !strings.Contains(string(r.body), want) {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// The database is still there, and the right key reads it.
	if r := f.do("GET", "/dbs/db", "dbs", "dbs/db", nil, nil); r.status != http.StatusOK {
		t.Fatalf("right key: %d %s", r.status, r.body)
	}
}

func TestTLSWithTheServedCertificate(t *testing.T) {
	f := MustServer(t)
	// The certificate is served without credentials, as the official
	// emulator serves it.
	r := f.doWith("", time.Now(), "GET", "/_explorer/emulator.pem", "", "", nil, nil)
	if r.status != http.StatusOK || string(r.body) != string(f.certPEM) {
		t.Fatalf("emulator.pem: %d %s", r.status, r.body)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(r.body) {
		t.Fatal("the served certificate does not parse")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	cred, _ := azcosmos.NewKeyCredential(cosmos.EmulatorKey)
	endpoint := "https://" + f.s.Addr().String() + "/"
	c, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateDatabase(context.Background(), azcosmos.DatabaseProperties{ID: "over-tls"}, nil); err != nil {
		t.Fatal(err)
	}
	// The account's location points back at the address and scheme used.
	req, _ := http.NewRequest("GET", endpoint, nil)
	d := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", d)
	req.Header.Set("Authorization", sign(cosmos.EmulatorKey, "GET", "", "", d))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"databaseAccountEndpoint":"`+endpoint+`"`) {
		t.Fatalf("account over TLS: %s", b)
	}
}

// emulatorToken makes a token as the official emulator takes them: a JWT
// whose signature part is the key, valid from nbf to exp.
func emulatorToken(key string, nbf, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"typ":"JWT","alg":"RS256","kid":"CosmosEmulatorPrimaryMaster"}`))
	payload := enc([]byte(fmt.Sprintf(`{"appid":"localhost","tid":"EmulatorFederation","nbf":%d,"exp":%d}`, nbf.Unix(), exp.Unix())))
	return header + "." + payload + "." + enc([]byte(key))
}

// tokenCredential hands out a fixed token.
type tokenCredential string

func (t tokenCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestEntraIDTokensAsTheEmulatorTakesThem(t *testing.T) {
	f := MustServer(t)
	f.MustContainer(f.MustDatabase("db"), "c", "/pk", nil)
	now := time.Now()
	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"Valid", emulatorToken(cosmos.EmulatorKey, now.Add(-time.Minute), now.Add(time.Hour)), true},
		{"OtherKey", emulatorToken("bm90IHRoZSBrZXk=", now.Add(-time.Minute), now.Add(time.Hour)), false},
		{"Expired", emulatorToken(cosmos.EmulatorKey, now.Add(-3*time.Hour), now.Add(-time.Hour)), false},
		{"NotAJWT", "garbage", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, err := azcosmos.NewClient(f.endpoint, tokenCredential(tc.token),
				&azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: f.http, InsecureAllowCredentialWithHTTP: true,
					// A refused account read is retried in the background
					// otherwise, past the end of the test.
					Retry: policy.RetryOptions{MaxRetries: -1}}})
			if err != nil {
				t.Fatal(err)
			}
			cc, _ := client.NewContainer("db", "c")
			_, err = cc.CreateItem(context.Background(), azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"`+tc.name+`","pk":"p"}`), nil)
			if tc.ok && err != nil {
				t.Fatalf("a valid token: %v", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "401")) {
				t.Fatalf("want 401, got %v", err)
			}
		})
	}
}

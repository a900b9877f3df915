package sas_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/servicebus/sas"
)

// The expected tokens below were computed outside Go (Python's hmac and
// urllib.parse.quote_plus, checked with openssl dgst -hmac), following the
// Go SDK's internal/sas: sr = lower(QueryEscape(uri)), signed text
// "<sr>\n<se>", sig = QueryEscape(base64(HMAC-SHA256)).
const (
	adminURL   = "https://localhost:5300/myqueue?api-version=2024-05"
	adminToken = "SharedAccessSignature sr=https%3a%2f%2flocalhost%3a5300%2fmyqueue%3fapi-version%3d2024-05" +
		"&sig=W%2BExyFf0%2FSfqW4D5KEVL8FdQ1efuHaWZn7a%2B69Lxd8s%3D&se=1700000000&skn=RootManageSharedAccessKey"
	// dotnetToken has upper-case escapes (WebUtility.UrlEncode) and the
	// fields in another order: the signature covers sr as sent.
	dotnetToken = "SharedAccessSignature skn=RootManageSharedAccessKey&se=1700000000" +
		"&sr=sb%3A%2F%2Flocalhost%2Fqueue.1&sig=kVTHdaUjTWZZunyrEZsHF8WL7nEpir93aXQ1XkVu79k%3D"
)

var expiry = time.Unix(1700000000, 0)

var defaultKey = sas.Key{Name: sas.DefaultKeyName, Value: sas.DefaultKeyValue}

func TestSignMatchesTheGoSDK(t *testing.T) {
	got := sas.Sign(defaultKey, adminURL, expiry)
	if diff := cmp.Diff(adminToken, got); diff != "" {
		t.Errorf("Sign (-want +got):\n%s", diff)
	}
}

func TestVerify(t *testing.T) {
	before := expiry.Add(-time.Minute)
	keys := []sas.Key{{Name: "other", Value: "x"}, defaultKey}
	tests := []struct {
		name     string
		token    string
		keys     []sas.Key
		resource string
		now      time.Time
		wantErr  string // a prefix of the message; "" for success
	}{
		{"GoSDKTokenForItsURL", adminToken, keys, adminURL, before, ""},
		{"ResourceCheckSkipped", adminToken, keys, "", before, ""},
		{"SchemeQueryAndCaseIgnored", adminToken, keys, "http://LOCALHOST:5300/MyQueue/", before, ""},
		{"ParentCoversChild", sas.Sign(defaultKey, "sb://localhost:5300/", expiry), keys, "http://localhost:5300/myqueue/Subscriptions/s", before, ""},
		{"AMQPAudienceCoversManagementLink", sas.Sign(defaultKey, "amqp://localhost/t", expiry), keys, "amqp://localhost/t/$management", before, ""},
		{"DotNetEscapesAndFieldOrder", dotnetToken, keys, "amqp://localhost/queue.1", before, ""},
		{"ValidUntilTheExpirySecond", adminToken, keys, adminURL, expiry, ""},
		{"Expired", adminToken, keys, adminURL, expiry.Add(time.Second), "ExpiredToken:"},
		{"OtherResource", adminToken, keys, "http://localhost:5300/otherqueue", before, "InvalidAudience:"},
		{"PrefixNotAtSegment", adminToken, keys, "http://localhost:5300/myqueue2", before, "InvalidAudience:"},
		{"OtherHost", adminToken, keys, "http://example.com:5300/myqueue", before, "InvalidAudience:"},
		{"UnknownKeyName", adminToken, []sas.Key{{Name: "other", Value: "SAS_KEY_VALUE"}}, "", before, "InvalidSignature:"},
		{"WrongKeyValue", adminToken, []sas.Key{{Name: "RootManageSharedAccessKey", Value: "nope"}}, "", before, "InvalidSignature:"},
		{"NoKeys", adminToken, nil, "", before, "InvalidSignature:"},
		{"TamperedResource", strings.Replace(adminToken, "myqueue", "myqueuf", 1), keys, "", before, "InvalidSignature:"},
		{"TamperedExpiry", strings.Replace(adminToken, "se=1700000000", "se=1800000000", 1), keys, "", before, "InvalidSignature:"},
		{"Empty", "", keys, "", before, "MalformedToken:"},
		{"NoPrefix", strings.TrimPrefix(adminToken, "SharedAccessSignature "), keys, "", before, "MalformedToken:"},
		{"MissingField", strings.Replace(adminToken, "&skn=RootManageSharedAccessKey", "", 1), keys, "", before, "MalformedToken:"},
		{"DuplicateField", adminToken + "&se=1", keys, "", before, "MalformedToken:"},
		{"Bearer", "Bearer abc", keys, "", before, "MalformedToken:"},
		{"SignatureNotBase64", strings.Replace(adminToken, "W%2BExy", "%%%", 1), keys, "", before, "InvalidSignature:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sas.Verify(tt.token, tt.keys, tt.resource, tt.now)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify succeeded, want %q", tt.wantErr)
			}
			if code := core.ErrorCode(err); code != core.EUNAUTHORIZED {
				t.Errorf("code %q, want %q", code, core.EUNAUTHORIZED)
			}
			if !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want it to start with %q", err, tt.wantErr)
			}
		})
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, resource := range []string{
		"sb://localhost/queue.1",
		"amqp://127.0.0.1:5672/topic-a/Subscriptions/sub_1",
		"https://localhost:5300/a/b/c?api-version=2024-05&$top=10",
		"http://host/name with spaces+plus",
	} {
		tok := sas.Sign(sas.Key{Name: "k", Value: "v"}, resource, expiry)
		if err := sas.Verify(tok, []sas.Key{{Name: "k", Value: "v"}}, resource, expiry.Add(-time.Hour)); err != nil {
			t.Errorf("%s: %v", resource, err)
		}
	}
}

func FuzzVerify(f *testing.F) {
	f.Add(adminToken, adminURL)
	f.Add(dotnetToken, "amqp://localhost/queue.1")
	f.Add("SharedAccessSignature sr=&sig=&se=&skn=", "")
	f.Fuzz(func(t *testing.T, token, resource string) {
		_ = sas.Verify(token, []sas.Key{defaultKey}, resource, expiry)
	})
}

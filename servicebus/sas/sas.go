package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// Key is a shared access key: its name (the token's skn) and its value, the
// HMAC key.
type Key struct {
	Name, Value string
}

// The key of the official emulator's connection string,
// "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;
// SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;".
const (
	DefaultKeyName  = "RootManageSharedAccessKey"
	DefaultKeyValue = "SAS_KEY_VALUE"
)

// prefix starts every token.
const prefix = "SharedAccessSignature "

// Sign returns a token for resource that expires at expiry (whole seconds),
// as the Go SDK writes it: the resource URL-encoded and lowercased.
func Sign(key Key, resource string, expiry time.Time) string {
	sr := strings.ToLower(url.QueryEscape(resource))
	se := strconv.FormatInt(expiry.Unix(), 10)
	sig := url.QueryEscape(signature(key.Value, sr, se))
	return prefix + "sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn=" + key.Name
}

// signature is the base64 HMAC-SHA256 of "<sr>\n<se>" keyed with value.
func signature(value, sr, se string) string {
	h := hmac.New(sha256.New, []byte(value))
	h.Write([]byte(sr + "\n" + se))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// Verify checks token against keys: it must be well formed, name one of the
// keys, carry that key's signature, not be expired at now, and its resource
// must cover resource: be equal to it or a parent of it, compared without
// case, after URL-decoding, ignoring the scheme (sb, amqp, amqps, http,
// https), any query and trailing slashes. An empty resource skips that
// check. Every failure is a *core.Error with code core.EUNAUTHORIZED whose
// message says why in the service's words.
func Verify(token string, keys []Key, resource string, now time.Time) error {
	f, err := parse(token)
	if err != nil {
		return err
	}
	var key *Key
	for i := range keys {
		if keys[i].Name == f.skn {
			key = &keys[i]
			break
		}
	}
	if key == nil {
		return core.Errorf(core.EUNAUTHORIZED, "InvalidSignature: The token has an invalid signature.")
	}
	got, err := url.PathUnescape(f.sig)
	if err != nil {
		return core.Errorf(core.EUNAUTHORIZED, "InvalidSignature: The token has an invalid signature.")
	}
	gotMAC, err1 := base64.StdEncoding.DecodeString(got)
	wantMAC, err2 := base64.StdEncoding.DecodeString(signature(key.Value, f.sr, f.se))
	if err1 != nil || err2 != nil || !hmac.Equal(gotMAC, wantMAC) {
		return core.Errorf(core.EUNAUTHORIZED, "InvalidSignature: The token has an invalid signature.")
	}
	se, err := strconv.ParseInt(f.se, 10, 64)
	if err != nil {
		return malformed()
	}
	if now.Unix() > se {
		return core.Errorf(core.EUNAUTHORIZED, "ExpiredToken: The token is expired. Expiration time: '%s'",
			time.Unix(se, 0).UTC().Format("2006-01-02 15:04:05Z"))
	}
	if resource == "" {
		return nil
	}
	audience, err := url.QueryUnescape(f.sr)
	if err != nil {
		return malformed()
	}
	if !covers(normalize(audience), normalize(resource)) {
		return core.Errorf(core.EUNAUTHORIZED, "InvalidAudience: The token audience '%s' is not valid for '%s'.", audience, resource)
	}
	return nil
}

// fields are a token's four fields, still URL-encoded.
type fields struct {
	sr, sig, se, skn string
}

// malformed is the service's error for a token it cannot read.
func malformed() error {
	return core.Errorf(core.EUNAUTHORIZED, "MalformedToken: The credentials contained in the authorization header are not in the WRAP format.")
}

// parse splits a token into its fields, in any order, each exactly once.
func parse(token string) (fields, error) {
	var f fields
	t := strings.TrimSpace(token)
	if len(t) < len(prefix) || !strings.EqualFold(t[:len(prefix)], prefix) {
		return f, malformed()
	}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(strings.TrimSpace(t[len(prefix):]), "&") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" || seen[k] {
			return f, malformed()
		}
		seen[k] = true
		switch k {
		case "sr":
			f.sr = v
		case "sig":
			f.sig = v
		case "se":
			f.se = v
		case "skn":
			f.skn = v
		}
	}
	if f.sr == "" || f.sig == "" || f.se == "" || f.skn == "" {
		return f, malformed()
	}
	return f, nil
}

// normalize lowercases a resource URI and drops its scheme, query and
// trailing slashes: "https://Host:5300/Q/?api-version=1" is "host:5300/q".
func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, "://"); i >= 0 {
		switch s[:i] {
		case "sb", "amqp", "amqps", "http", "https":
			s = s[i+3:]
		}
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, "/")
}

// covers says whether the normalized audience is resource or one of its
// parents (a prefix ending at a path segment).
func covers(audience, resource string) bool {
	if !strings.HasPrefix(resource, audience) {
		return false
	}
	return len(resource) == len(audience) || resource[len(audience)] == '/'
}

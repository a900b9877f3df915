package cosmos_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/cosmos"
)

// restResponse is a raw REST answer.
type restResponse struct {
	status int
	header http.Header
	body   []byte
}

// sign returns the Authorization header of a request, as the SDKs make it.
func sign(key, verb, resourceType, resourceLink, date string) string {
	k, _ := base64.StdEncoding.DecodeString(key)
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(strings.ToLower(verb) + "\n" + strings.ToLower(resourceType) + "\n" + resourceLink + "\n" + strings.ToLower(date) + "\n\n"))
	return url.QueryEscape("type=master&ver=1.0&sig=" + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

// do sends a REST request signed with the emulator key for resourceType
// and resourceLink, with extra headers, and returns the answer.
func (f *fixture) do(verb, path, resourceType, resourceLink string, body []byte, headers map[string]string) restResponse {
	f.tb.Helper()
	return f.doWith(cosmos.EmulatorKey, time.Now(), verb, path, resourceType, resourceLink, body, headers)
}

// doWith is do with another key and date.
func (f *fixture) doWith(key string, date time.Time, verb, path, resourceType, resourceLink string, body []byte, headers map[string]string) restResponse {
	f.tb.Helper()
	req, err := http.NewRequest(verb, strings.TrimSuffix(f.endpoint, "/")+path, bytes.NewReader(body))
	if err != nil {
		f.tb.Fatal(err)
	}
	d := date.UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", d)
	req.Header.Set("x-ms-version", "2020-11-05")
	if key != "" {
		req.Header.Set("Authorization", sign(key, verb, resourceType, resourceLink, d))
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		f.tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.tb.Fatal(err)
	}
	return restResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// feedIDs reads the ids of a feed page's Documents.
func feedIDs(tb testing.TB, body []byte) []string {
	tb.Helper()
	var page struct {
		Documents []struct {
			ID string `json:"id"`
		}
		Count int `json:"_count"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		tb.Fatalf("%v: %s", err, body)
	}
	ids := []string{}
	for _, d := range page.Documents {
		ids = append(ids, d.ID)
	}
	if page.Count != len(ids) {
		tb.Fatalf("_count %d for %d documents", page.Count, len(ids))
	}
	return ids
}

// readFeedPages reads a read feed a page of size items at a time (0: the
// default), in partition pk (a header value, "" for all).
func (f *fixture) readFeedPages(db, coll, pk string, size int) []string {
	f.tb.Helper()
	link := "dbs/" + db + "/colls/" + coll
	ids := []string{}
	continuation := ""
	for {
		h := map[string]string{}
		if pk != "" {
			h["x-ms-documentdb-partitionkey"] = pk
		}
		if size > 0 {
			h["x-ms-max-item-count"] = strconv.Itoa(size)
		}
		if continuation != "" {
			h["x-ms-continuation"] = continuation
		}
		r := f.do("GET", "/"+link+"/docs", "docs", link, nil, h)
		if r.status != http.StatusOK {
			f.tb.Fatalf("read feed: %d %s", r.status, r.body)
		}
		ids = append(ids, feedIDs(f.tb, r.body)...)
		if continuation = r.header.Get("x-ms-continuation"); continuation == "" {
			return ids
		}
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// control is a client of lapse's control API (port 8080).
type control struct {
	base string
	http *http.Client
}

func newControl(base string) *control {
	return &control{base: base, http: &http.Client{Timeout: time.Minute}}
}

// event is what the app prints of an entry of GET /api/events.
type event struct {
	ID       uint64 `json:"id"`
	Protocol string `json:"protocol"`
	Entity   string `json:"entity"`
	Rule     string `json:"rule"`
	Action   string `json:"action"`
	Reason   string `json:"reason"`
}

// do sends a request with an optional JSON body and decodes the JSON answer
// into out, if out is not nil.
func (c *control) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// trust downloads lapse's certificate (GET /cert.pem) and returns a TLS
// configuration that trusts it, and only it.
func (c *control) trust(ctx context.Context) (*tls.Config, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/cert.pem", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("lapse's certificate: %w", err)
	}
	defer resp.Body.Close()
	pem, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("lapse's certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if resp.StatusCode != http.StatusOK || !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("GET /cert.pem: %s, no certificate", resp.Status)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// lastEventID is the ID of the newest event in lapse's expiry log, 0 if
// there is none.
func (c *control) lastEventID(ctx context.Context) (uint64, error) {
	events, err := c.eventsSince(ctx, 0)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	return events[len(events)-1].ID, nil
}

// eventsSince returns the events of the expiry log after the one with ID since.
func (c *control) eventsSince(ctx context.Context, since uint64) ([]event, error) {
	var events []event
	err := c.do(ctx, http.MethodGet, "/api/events?since="+strconv.FormatUint(since, 10), nil, &events)
	return events, err
}

// advance moves lapse's clock forward by a Go or ISO 8601 duration and
// returns the new time. lapse answers once everything due by then has
// expired.
func (c *control) advance(ctx context.Context, by string) (string, error) {
	var clock struct {
		Now string `json:"now"`
	}
	err := c.do(ctx, http.MethodPost, "/api/clock/advance", map[string]string{"by": by}, &clock)
	return clock.Now, err
}

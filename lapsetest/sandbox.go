package lapsetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// DefaultURL is the control API a Sandbox is made in when LAPSE_URL is not
// set: a lapse on this machine with its default ports.
const DefaultURL = "http://localhost:8080"

// Sandbox is a world of its own in a lapse that is already running (a local
// one, a CI service container): its own clock, frozen at creation, and its
// own entities, reached on that lapse's ports by connection settings of its
// own (docs/parallel-tests.md). Tests that run in parallel, in one process
// or many, each take a Sandbox and cannot see or expire each other's
// entities. Its methods may be called from any goroutine.
type Sandbox struct {
	tb   testing.TB
	base string // the sandbox's control API: .../api/sandboxes/{id}
	http *http.Client
	info sandboxInfo
}

// sandboxInfo is the control API's view of a sandbox.
type sandboxInfo struct {
	ID         string `json:"id"`
	Control    string `json:"control"`
	ServiceBus struct {
		ConnectionString string `json:"connectionString"`
	} `json:"servicebus"`
	RabbitMQ struct {
		URL           string `json:"url"`
		ManagementURL string `json:"managementUrl"`
	} `json:"rabbitmq"`
	Cosmos struct {
		Endpoint string `json:"endpoint"`
		Key      string `json:"key"`
	} `json:"cosmos"`
}

// SandboxOption changes how NewSandbox makes a sandbox.
type SandboxOption func(*sandboxOptions)

type sandboxOptions struct {
	url  string
	req  map[string]any
	errs []error
}

// At makes the sandbox in the lapse whose control API is at url, instead
// of LAPSE_URL's or DefaultURL.
func At(url string) SandboxOption {
	return func(o *sandboxOptions) { o.url = url }
}

// IdleTTL is how long the sandbox may go unused, on the wall clock, before
// lapse deletes it (EM-5), should the test not end cleanly.
func IdleTTL(d time.Duration) SandboxOption {
	return func(o *sandboxOptions) { o.req["idleTtlSeconds"] = int64(d / time.Second) }
}

// RunningClock makes the sandbox's clock follow the wall clock from its
// creation; by default it is frozen and moves only by Advance and Set.
func RunningClock() SandboxOption {
	return func(o *sandboxOptions) { o.req["clock"] = "running" }
}

// SandboxServiceBusConfig, SandboxRabbitMQDefinitions and
// SandboxCosmosConfig declare what the file at path holds in the sandbox
// at its creation, as WithServiceBusConfig and its kin do for New.
func SandboxServiceBusConfig(path string) SandboxOption { return configFile("servicebusConfig", path) }

// SandboxRabbitMQDefinitions: see SandboxServiceBusConfig.
func SandboxRabbitMQDefinitions(path string) SandboxOption {
	return configFile("rabbitmqDefinitions", path)
}

// SandboxCosmosConfig: see SandboxServiceBusConfig.
func SandboxCosmosConfig(path string) SandboxOption { return configFile("cosmosConfig", path) }

func configFile(field, path string) SandboxOption {
	return func(o *sandboxOptions) {
		b, err := os.ReadFile(path)
		if err != nil {
			o.errs = append(o.errs, err)
			return
		}
		o.req[field] = json.RawMessage(b)
	}
}

// NewSandbox makes a sandbox in the lapse at LAPSE_URL (DefaultURL when it
// is not set, At to name another) and deletes it when the test ends. It
// fails the test when no lapse answers there.
func NewSandbox(tb testing.TB, opts ...SandboxOption) *Sandbox {
	tb.Helper()
	s, err := StartSandbox(opts...)
	if err != nil {
		tb.Fatalf("lapsetest: %v", err)
	}
	s.tb = tb
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("lapsetest: %v", err)
		}
	})
	return s
}

// StartSandbox is NewSandbox outside a test: the caller deletes the
// sandbox with Close.
func StartSandbox(opts ...SandboxOption) (*Sandbox, error) {
	o := sandboxOptions{url: os.Getenv("LAPSE_URL"), req: map[string]any{}}
	for _, opt := range opts {
		opt(&o)
	}
	if err := errors.Join(o.errs...); err != nil {
		return nil, err
	}
	from := "LAPSE_URL"
	if o.url == "" {
		o.url, from = DefaultURL, "the default; set LAPSE_URL to use another"
	}
	base := strings.TrimRight(o.url, "/")
	s := &Sandbox{http: &http.Client{Timeout: time.Minute}}
	body, _ := json.Marshal(o.req)
	if err := s.call(http.MethodPost, base+"/api/sandboxes", body, http.StatusCreated, &s.info); err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("no lapse answers at %s (%s): start one (lapse serve, or its container), or point LAPSE_URL at it: %w", base, from, err)
		}
		return nil, err
	}
	s.base = base + "/api/sandboxes/" + s.info.ID
	return s, nil
}

// call sends body to url, checks the answer's status is want and decodes
// its JSON into out, if not nil.
func (s *Sandbox) call(method, url string, body []byte, want int, out any) error {
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s %s: %d: %s", method, url, resp.StatusCode, e.Error)
		}
		return fmt.Errorf("%s %s: %d: %s", method, url, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// fail fails the test, or panics outside one (StartSandbox).
func (s *Sandbox) fail(err error) {
	if s.tb == nil {
		panic("lapsetest: " + err.Error())
	}
	s.tb.Helper()
	s.tb.Fatalf("lapsetest: %v", err)
}

// Close deletes the sandbox with everything in it. NewSandbox calls it
// when the test ends; calling it again does nothing.
func (s *Sandbox) Close() error {
	if s.base == "" {
		return nil
	}
	err := s.call(http.MethodDelete, s.base, nil, http.StatusNoContent, nil)
	s.base = ""
	return err
}

// ID is the sandbox's id, which is also its RabbitMQ virtual host and its
// Service Bus shared access key name.
func (s *Sandbox) ID() string { return s.info.ID }

// ServiceBusConnectionString is the sandbox's Service Bus connection
// string: lapse's AMQP port, with the sandbox's own key name and key.
func (s *Sandbox) ServiceBusConnectionString() string { return s.info.ServiceBus.ConnectionString }

// RabbitMQURL is the AMQP 0-9-1 URL of the sandbox's virtual host.
func (s *Sandbox) RabbitMQURL() string { return s.info.RabbitMQ.URL }

// RabbitMQManagementURL is the base URL of the management API, where the
// sandbox's virtual host is served.
func (s *Sandbox) RabbitMQManagementURL() string { return s.info.RabbitMQ.ManagementURL }

// CosmosEndpoint is the Cosmos DB endpoint over plain HTTP, shared by
// every sandbox; CosmosKey is the sandbox's own account key, which
// chooses it.
func (s *Sandbox) CosmosEndpoint() string { return s.info.Cosmos.Endpoint }

// CosmosKey: see CosmosEndpoint.
func (s *Sandbox) CosmosKey() string { return s.info.Cosmos.Key }

// ControlURL is the base URL of the sandbox's own control API: its clock,
// events and entities at ControlURL()+"/api/...".
func (s *Sandbox) ControlURL() string { return s.base }

// clockState is the body of the clock calls.
type clockState struct {
	Now time.Time `json:"now"`
}

// Now is the time on the sandbox's clock.
func (s *Sandbox) Now() time.Time {
	var c clockState
	if err := s.call(http.MethodGet, s.base+"/api/clock", nil, http.StatusOK, &c); err != nil {
		s.fail(err)
	}
	return c.Now
}

// Advance moves the sandbox's clock forward by d and returns once
// everything due up to the new time is applied in the sandbox. No other
// sandbox's clock, nor the default world's, moves.
func (s *Sandbox) Advance(d time.Duration) {
	if s.tb != nil {
		s.tb.Helper()
	}
	body, _ := json.Marshal(map[string]string{"by": d.String()})
	if err := s.call(http.MethodPost, s.base+"/api/clock/advance", body, http.StatusOK, nil); err != nil {
		s.fail(err)
	}
}

// Set moves the sandbox's clock to t and returns once everything due up to
// t is applied; the clock never goes back.
func (s *Sandbox) Set(t time.Time) {
	if s.tb != nil {
		s.tb.Helper()
	}
	body, _ := json.Marshal(map[string]string{"now": t.UTC().Format(time.RFC3339Nano)})
	if err := s.call(http.MethodPost, s.base+"/api/clock/set", body, http.StatusOK, nil); err != nil {
		s.fail(err)
	}
}

// Events returns the sandbox's event log, oldest first.
func (s *Sandbox) Events() []Event {
	var evs []Event
	if err := s.call(http.MethodGet, s.base+"/api/events", nil, http.StatusOK, &evs); err != nil {
		s.fail(err)
	}
	return evs
}

package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Policy is the body of PUT /api/policies/{vhost}/{name} and of
// /api/operator-policies/.
type Policy struct {
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// Policy returns the scenario's policy name for short, deletes a policy of
// that name left by an earlier run, and deletes it again at the end.
func (s *S) Policy(short string) string {
	s.tb.Helper()
	name := s.Name(short)
	s.policies = append(s.policies, name)
	if err := s.deletePolicy("policies", name); err != nil {
		s.tb.Fatal(err)
	}
	return name
}

// OperatorPolicy is Policy for an operator policy.
func (s *S) OperatorPolicy(short string) string {
	s.tb.Helper()
	name := s.Name(short)
	s.operatorPolicies = append(s.operatorPolicies, name)
	if err := s.deletePolicy("operator-policies", name); err != nil {
		s.tb.Fatal(err)
	}
	return name
}

// PutPolicy records a PUT of a user policy in vhost "/": the HTTP status and,
// on an error, the reason the API gave.
func (s *S) PutPolicy(name string, p Policy) {
	s.tb.Helper()
	s.putPolicy("policies", name, p)
}

// PutOperatorPolicy is PutPolicy for an operator policy.
func (s *S) PutOperatorPolicy(name string, p Policy) {
	s.tb.Helper()
	s.putPolicy("operator-policies", name, p)
}

func (s *S) putPolicy(kind, name string, p Policy) {
	s.tb.Helper()
	def, err := json.Marshal(p.Definition)
	if err != nil {
		s.tb.Fatalf("policy %s: %v", name, err)
	}
	status, body := s.mgmt(http.MethodPut, "/api/"+kind+"/%2F/"+url.PathEscape(name), p)
	line := fmt.Sprintf("PUT %s %q pattern=%q apply-to=%q priority=%d definition=%s: %d",
		kind, name, p.Pattern, p.ApplyTo, p.Priority, def, status)
	if status >= 300 {
		line += " " + errorReason(body)
	}
	s.Note("%s", line)
}

// QueueInfo records the named fields of GET /api/queues/%2F/{queue}, as JSON,
// in the order given (a dotted name is a field of a field). RabbitMQ adds some fields (policy, operator_policy,
// effective_policy_definition) only with its first statistics emission, up to
// about 5 s after the declare, so QueueInfo asks until every field is there
// (at most infoTimeout of real time). Counters do not belong here: they lag.
func (s *S) QueueInfo(queue string, fields ...string) {
	s.tb.Helper()
	deadline := time.Now().Add(infoTimeout)
	for {
		status, body := s.mgmt(http.MethodGet, "/api/queues/%2F/"+url.PathEscape(queue), nil)
		if status != http.StatusOK {
			s.Note("GET queue %q: %d %s", queue, status, errorReason(body))
			return
		}
		var info map[string]json.RawMessage
		if err := json.Unmarshal(body, &info); err != nil {
			s.tb.Fatalf("GET queue %s: %v: %s", queue, err, body)
		}
		parts := make([]string, len(fields))
		missing := false
		for i, f := range fields {
			v, ok := field(info, f)
			if !ok {
				parts[i] = f + "=<absent>"
				missing = true
				continue
			}
			parts[i] = f + "=" + canonicalJSON(v)
		}
		if !missing || time.Now().After(deadline) {
			s.Note("GET queue %q: %s", queue, strings.Join(parts, " "))
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// field returns the value of a field of a JSON object; a dotted name
// ("backing_queue_status.len") names a field of a field.
func field(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	head, rest, nested := strings.Cut(name, ".")
	v, ok := obj[head]
	if !ok || !nested {
		return v, ok
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(v, &inner) != nil {
		return nil, false
	}
	return field(inner, rest)
}

// infoTimeout bounds QueueInfo's wait for RabbitMQ's statistics emission.
const infoTimeout = 15 * time.Second

// canonicalJSON re-encodes a JSON value with object keys sorted.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// errorReason writes the reason of a management API error body
// ({"error": ..., "reason": ...}), or the body itself.
func errorReason(body []byte) string {
	var e struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		return fmt.Sprintf("body=%q", body)
	}
	return fmt.Sprintf("error=%q reason=%q", e.Error, e.Reason)
}

// deletePolicy deletes a policy (kind "policies" or "operator-policies") if
// it exists; it returns only transport errors.
func (s *S) deletePolicy(kind, name string) error {
	_, _, err := s.mgmtTry(http.MethodDelete, "/api/"+kind+"/%2F/"+url.PathEscape(name), nil)
	return err
}

// mgmt calls the management API; transport errors fail the scenario.
func (s *S) mgmt(method, path string, body any) (int, []byte) {
	s.tb.Helper()
	status, b, err := s.mgmtTry(method, path, body)
	if err != nil {
		s.tb.Fatal(err)
	}
	return status, b
}

// mgmtTry calls the management API: path is already escaped (vhost "/" is
// %2F), body is sent as JSON when not nil.
func (s *S) mgmtTry(method, path string, body any) (int, []byte, error) {
	return s.mgmtDo(method, path, body, nil)
}

// mgmtDo is mgmtTry with extra request headers.
func (s *S) mgmtDo(method, path string, body any, header http.Header) (int, []byte, error) {
	if s.target.ManagementURL == "" {
		return 0, nil, fmt.Errorf("%s %s: target %s has no management API", method, path, s.target.Name)
	}
	base, err := url.Parse(s.target.ManagementURL)
	if err != nil {
		return 0, nil, fmt.Errorf("management URL: %w", err)
	}
	user := base.User
	base.User = nil
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(base.String(), "/")+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if user != nil {
		pw, _ := user.Password()
		req.SetBasicAuth(user.Username(), pw)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	// A redirect is an answer to record, not to follow: RabbitMQ sends none.
	client := &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

package rabbitmq

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/adapters"
	"github.com/lapse-emulator/lapse/core"
)

// This file is the management API's policies and operator policies
// (rabbit_mgmt_wm_policy, _policies, _operator_policy, _operator_policies).

// policyJSON is a policy as GET /api/policies shows it.
func policyJSON(p adapters.RabbitPolicy) map[string]any {
	def := p.Definition
	if def == nil {
		def = map[string]any{}
	}
	return map[string]any{
		"vhost":      p.VHost,
		"name":       p.Name,
		"pattern":    p.Pattern,
		"apply-to":   applyTo(p.ApplyTo),
		"definition": def,
		"priority":   p.Priority,
	}
}

// applyTo is a policy's apply-to, "all" when it was not given.
func applyTo(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

// GET /api/policies[/{vhost}] and /api/operator-policies[/{vhost}]: sorted
// by priority, lowest first, as RabbitMQ lists them.
func (m *Management) listPolicies(op bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		vh, ok := m.vhostParam(c)
		if !ok {
			m.writeError(c, errObjectNotFound)
			return
		}
		u := m.user(c)
		items := []map[string]any{}
		for _, name := range m.s.vhostNames() {
			if vh != "" && name != vh || !u.seesVhost(name) {
				continue
			}
			for _, p := range m.s.Policies(name, op) {
				items = append(items, policyJSON(p))
			}
		}
		m.replyList(c, items, []string{"priority", "vhost", "name"}, false)
	}
}

// pathPolicy returns the path's policy, or the 404 of a missing vhost or
// policy.
func (m *Management) pathPolicy(c *gin.Context, op bool) (adapters.RabbitPolicy, error) {
	vh, ok := m.vhostParam(c)
	if !ok {
		return adapters.RabbitPolicy{}, errObjectNotFound
	}
	name := m.param(c, "name")
	i := slices.IndexFunc(m.s.Policies(vh, op), func(p adapters.RabbitPolicy) bool { return p.Name == name })
	if i < 0 {
		return adapters.RabbitPolicy{}, errObjectNotFound
	}
	return m.s.Policies(vh, op)[i], nil
}

// GET /api/policies/{vhost}/{name}
func (m *Management) getPolicy(op bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := m.pathPolicy(c, op)
		if err != nil {
			m.writeError(c, err)
			return
		}
		m.reply(c, policyJSON(p))
	}
}

// PUT /api/policies/{vhost}/{name} with {pattern, definition, priority,
// apply-to}: priority defaults to 0 and apply-to to "all". The validation
// errors are RabbitMQ's "Validation failed\n\n...\n", HTML-escaped for
// user policies as rabbit_mgmt_wm_policy escapes them.
func (m *Management) putPolicy(op bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		vh, ok := m.vhostParam(c)
		if !ok {
			m.writeError(c, errVhostNotFound)
			return
		}
		name := m.param(c, "name")
		body, err := readBody(c)
		if err == nil {
			err = requireKeys(body, "pattern", "definition")
		}
		if err != nil {
			m.writeError(c, err)
			return
		}
		p, err := policyFromJSON(vh, name, body)
		if err == nil {
			existed := slices.ContainsFunc(m.s.Policies(vh, op), func(p adapters.RabbitPolicy) bool { return p.Name == name })
			if err = m.s.PutPolicy(vh, p, op); err == nil {
				created(c, existed)
				return
			}
		}
		switch core.ErrorCode(err) {
		case core.ENOTFOUND:
			err = errVhostNotFound
		case core.EINVALID:
			reason := core.ErrorMessage(err)
			if !op {
				reason = escapeHTMLTags(reason)
			}
			err = badRequest(reason)
		}
		m.writeError(c, err)
	}
}

// policyFromJSON reads a policy's body (a definitions file's policy, or
// an operator policy parameter's value): pattern, definition, priority
// and apply-to.
func policyFromJSON(vh, name string, body map[string]any) (adapters.RabbitPolicy, error) {
	p := adapters.RabbitPolicy{Name: name, VHost: vh, ApplyTo: "all"}
	invalid := func(format string, args ...any) error {
		return core.Errorf(core.EINVALID, "Validation failed\n\n%s\n", fmt.Sprintf(format, args...))
	}
	switch v := body["priority"].(type) {
	case nil:
	case json.Number:
		n, err := parseInt(v)
		if err != nil {
			return p, invalid("priority should be a number, actually was %s", erlangJSON(v))
		}
		p.Priority = int(n)
	case float64:
		p.Priority = int(v)
	case int64:
		p.Priority = int(v)
	default:
		return p, invalid("priority should be a number, actually was %s", erlangJSON(v))
	}
	pattern, ok := body["pattern"].(string)
	if !ok {
		return p, invalid("pattern should be regular expression but is invalid: %s", erlangJSON(body["pattern"]))
	}
	p.Pattern = pattern
	switch v := body["apply-to"].(type) {
	case nil:
	case string:
		p.ApplyTo = v
	default:
		return p, invalid("apply-to %s unrecognised; should be 'queues', 'exchanges' or 'all'", erlangJSON(v))
	}
	switch v := body["definition"].(type) {
	case map[string]any:
		p.Definition = normalizeJSON(v).(map[string]any)
	case nil:
		p.Definition = map[string]any{}
	default:
		return p, invalid("definition must be an object, actually was %s", erlangJSON(v))
	}
	return p, nil
}

// DELETE /api/policies/{vhost}/{name}
func (m *Management) deletePolicy(op bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := m.pathPolicy(c, op)
		if err != nil {
			m.writeError(c, err)
			return
		}
		if err := m.s.DeletePolicy(p.VHost, p.Name, op); err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				err = errObjectNotFound
			}
			m.writeError(c, err)
			return
		}
		noContent(c)
	}
}

// escapeHTMLTags is rabbit_mgmt_format:escape_html_tags.
func escapeHTMLTags(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

// erlangJSON writes a decoded JSON value as Erlang's ~p prints the term
// RabbitMQ decodes it to.
func erlangJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "<<" + fmt.Sprintf("%q", x) + ">>"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = erlangJSON(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(x) {
			parts = append(parts, erlangJSON(k)+" => "+erlangJSON(x[k]))
		}
		return "#{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

package rabbitmq

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// This file is the management API's bindings (rabbit_mgmt_wm_binding,
// _bindings).
//
// A binding's properties_key names it in URLs among the bindings between
// the same source and destination, as rabbit_mgmt_format:
// pack_binding_props makes it:
//
//	no arguments, routing key ""   "~"
//	no arguments                   quote(routing key)
//	arguments                      quote(routing key) "~" quote(hash of the arguments)
//
// where quote is quote_plus with '~' written %7E. RabbitMQ's hash is
// erlang:phash2 of the arguments as Erlang terms, base64url-encoded; lapse
// hashes the arguments' wire encoding (FNV-1a, 32 bits) and encodes it the
// same way, so its keys have the same form but other values. Clients take
// the key from a listing and hand it back, so that does not show.

// bindingSort is the default order of binding lists.
func bindingSort() []string {
	return []string{"vhost", "source", "type", "destination", "routing_key", "properties_key"}
}

// argsHash hashes a binding's arguments (their wire encoding).
func argsHash(argsID string) string {
	h := fnv.New32a()
	h.Write([]byte(argsID))
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], h.Sum32())
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// quoteBinding is rabbit_mgmt_format:quote_binding.
func quoteBinding(s string) string { return strings.ReplaceAll(quotePlus(s), "~", "%7E") }

// propertiesKey is a binding's properties_key.
func propertiesKey(key, argsID string) string {
	switch {
	case argsID == "" && key == "":
		return "~"
	case argsID == "":
		return quoteBinding(key)
	}
	return quoteBinding(key) + "~" + quoteBinding(argsHash(argsID))
}

// tokenise is rabbit_mgmt_format:tokenise: the parts between '~'s, with
// no empty part at the end.
func tokenise(s string) []string {
	if s == "" {
		return nil
	}
	i := strings.IndexByte(s, '~')
	if i < 0 {
		return []string{s}
	}
	return append([]string{s[:i]}, tokenise(s[i+1:])...)
}

// bindingJSON is a binding as GET /api/bindings shows it.
func bindingJSON(b bindingView) map[string]any {
	return map[string]any{
		"source":           b.source,
		"vhost":            b.vhost,
		"destination":      b.dest,
		"destination_type": b.destType,
		"routing_key":      b.key,
		"arguments":        tableJSON(b.args),
		"properties_key":   propertiesKey(b.key, b.argsID),
	}
}

// GET /api/bindings[/{vhost}]
func (m *Management) listBindings(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	u := m.user(c)
	items := []map[string]any{}
	for _, b := range m.s.bindingsIn(vh) {
		if u.seesVhost(b.vhost) {
			items = append(items, bindingJSON(b))
		}
	}
	m.replyList(c, items, bindingSort(), false)
}

// GET /api/exchanges/{vhost}/{name}/bindings/source and .../destination
func (m *Management) listExchangeBindings(source bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		vh, ok := m.vhostParam(c)
		if !ok {
			m.writeError(c, errObjectNotFound)
			return
		}
		name := m.exchangeParam(c, "name")
		if _, ok := m.s.lookupExchangeView(vh, name); !ok {
			m.writeError(c, errObjectNotFound)
			return
		}
		items := []map[string]any{}
		for _, b := range m.s.bindingsIn(vh) {
			if source && b.source == name || !source && b.destType == "exchange" && b.dest == name {
				items = append(items, bindingJSON(b))
			}
		}
		m.replyList(c, items, bindingSort(), false)
	}
}

// bindingPath is the source and destination of a /api/bindings/{vhost}/e/
// {source}/{q|e}/{destination} path.
type bindingPath struct {
	vhost, source, dest string
	toExchange          bool
}

func (p bindingPath) destType() string {
	if p.toExchange {
		return "exchange"
	}
	return "queue"
}

// bindingParams reads a binding path; ok is false for a dtype other than
// "q" and "e".
func (m *Management) bindingParams(c *gin.Context) (bindingPath, bool) {
	vh, _ := m.pathVhost(c)
	p := bindingPath{vhost: vh, source: m.exchangeParam(c, "source")}
	switch c.Param("dtype") {
	case "q":
		p.dest = m.param(c, "dest")
	case "e":
		p.toExchange = true
		p.dest = m.exchangeParam(c, "dest")
	default:
		return p, false
	}
	return p, true
}

// between returns the bindings of the path's source and destination.
func (m *Management) between(p bindingPath) []bindingView {
	var out []bindingView
	for _, b := range m.s.bindingsIn(p.vhost) {
		if b.source == p.source && b.dest == p.dest && b.destType == p.destType() {
			out = append(out, b)
		}
	}
	return out
}

// GET /api/bindings/{vhost}/e/{source}/{q|e}/{destination}
func (m *Management) listBindingsBetween(c *gin.Context) {
	p, ok := m.bindingParams(c)
	if !ok || m.s.lookupVhost(p.vhost) == nil {
		m.writeError(c, errObjectNotFound)
		return
	}
	items := []map[string]any{}
	for _, b := range m.between(p) {
		items = append(items, bindingJSON(b))
	}
	m.replyList(c, items, bindingSort(), false)
}

// POST /api/bindings/{vhost}/e/{source}/{q|e}/{destination}: queue.bind
// or exchange.bind; 201 with the new binding's URL, relative to the
// request's, in Location.
func (m *Management) postBinding(c *gin.Context) {
	p, ok := m.bindingParams(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	if m.s.lookupVhost(p.vhost) == nil {
		m.writeError(c, errVhostNotFound)
		return
	}
	body, err := readBody(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	key, err := bodyString(body, "routing_key", "")
	if err != nil {
		m.writeError(c, err)
		return
	}
	args, err := jsonToTable(body["arguments"])
	if err != nil {
		m.writeError(c, err)
		return
	}
	if err := m.bindPermitted(c, p); err != nil {
		m.writeError(c, directError(err))
		return
	}
	if err := m.s.bind(nil, p.vhost, p.source, p.dest, p.toExchange, key, args, false); err != nil {
		m.writeError(c, directError(err))
		return
	}
	c.Header("Location", quotePlus(p.dest)+"/"+quotePlus(propertiesKey(key, string(encodeTable(args)))))
	c.Status(http.StatusCreated)
	c.Writer.WriteHeaderNow()
}

// bindPermitted is a binding's check: write on the destination, read on
// the source exchange.
func (m *Management) bindPermitted(c *gin.Context, p bindingPath) error {
	if err := m.permitted(c, p.vhost, write, p.destType(), cmp.Or(p.dest, defaultExchangeURLName)); err != nil {
		return err
	}
	return m.permitted(c, p.vhost, read, "exchange", cmp.Or(p.source, defaultExchangeURLName))
}

// pathBinding finds the binding a props segment names; ok is false when
// there is none.
func (m *Management) pathBinding(c *gin.Context) (bindingPath, bindingView, bool) {
	p, ok := m.bindingParams(c)
	if !ok || m.s.lookupVhost(p.vhost) == nil {
		return p, bindingView{}, false
	}
	parts := tokenise(m.param(c, "props"))
	if len(parts) == 0 || len(parts) > 2 {
		return p, bindingView{}, false
	}
	key := unquotePlus(parts[0])
	for _, b := range m.between(p) {
		if b.key != key {
			continue
		}
		if len(parts) == 1 && b.argsID == "" || len(parts) == 2 && b.argsID != "" && argsHash(b.argsID) == unquotePlus(parts[1]) {
			return p, b, true
		}
	}
	return p, bindingView{}, false
}

// GET /api/bindings/{vhost}/e/{source}/{q|e}/{destination}/{props}
func (m *Management) getBinding(c *gin.Context) {
	_, b, ok := m.pathBinding(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.reply(c, bindingJSON(b))
}

// DELETE /api/bindings/{vhost}/e/{source}/{q|e}/{destination}/{props}:
// queue.unbind or exchange.unbind.
func (m *Management) deleteBinding(c *gin.Context) {
	p, b, ok := m.pathBinding(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	if err := m.bindPermitted(c, p); err != nil {
		m.writeError(c, directError(err))
		return
	}
	if err := m.s.bind(nil, p.vhost, p.source, p.dest, p.toExchange, b.key, b.args, true); err != nil {
		m.writeError(c, directError(err))
		return
	}
	noContent(c)
}

package rabbitmq

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

// This file is the management API's queues (rabbit_mgmt_wm_queue,
// _queues, _queue_get, _queue_purge).

// mgmtNode is the node name lapse shows, the one its server properties
// give as cluster_name.
const mgmtNode = "rabbit@lapse"

// idleSinceLayout is how RabbitMQ 3.10 writes idle_since.
const idleSinceLayout = "2006-01-02T15:04:05.000-07:00"

// rate is a *_details object: lapse keeps no rates.
func rate() map[string]any { return map[string]any{"rate": 0.0} }

// queueJSON is a queue as GET /api/queues shows it; ok is false when the
// queue went away meanwhile. full adds what only GET of one queue shows;
// stats false is disable_stats=true.
func (m *Management) queueJSON(q *queue, full, stats bool) (map[string]any, bool) {
	st := q.getSettings()
	obj := map[string]any{
		"name":        q.name,
		"vhost":       q.vhost,
		"type":        st.Type,
		"durable":     q.durable,
		"auto_delete": q.autoDelete,
		"exclusive":   q.exclusive,
		"arguments":   tableJSON(q.args),
		"node":        mgmtNode,
	}
	if q.owner != nil {
		obj["owner_pid_details"] = connDetails(q.owner)
	}
	if !stats {
		obj["state"] = "live"
		if st.PolicyName != "" {
			obj["policy"] = st.PolicyName
		}
		if st.OperatorPolicyName != "" {
			obj["operator_policy"] = st.OperatorPolicyName
		}
		return obj, true
	}
	info, err := m.s.e.Info(m.s.now(), q.key)
	if err != nil {
		return nil, false
	}
	eff := map[string]any{}
	for k, v := range st.EffectiveDefinition {
		eff[k] = v
	}
	consumers := q.consumersCopy()
	var exclusiveTag any
	for _, cs := range consumers {
		if cs.exclusive {
			exclusiveTag = cs.tag
		}
	}
	ready, unacked := info.Counts.Active, info.Counts.Locked
	obj["policy"] = nullIfEmpty(st.PolicyName)
	obj["operator_policy"] = nullIfEmpty(st.OperatorPolicyName)
	obj["effective_policy_definition"] = eff
	obj["state"] = "running"
	obj["messages"] = ready + unacked
	obj["messages_ready"] = ready
	obj["messages_unacknowledged"] = unacked
	obj["messages_details"] = rate()
	obj["messages_ready_details"] = rate()
	obj["messages_unacknowledged_details"] = rate()
	// The engine counts the bytes of ready messages only. Every message
	// is in memory: none is paged out.
	obj["message_bytes"] = info.Counts.ActiveBytes
	obj["message_bytes_ready"] = info.Counts.ActiveBytes
	obj["message_bytes_unacknowledged"] = 0
	obj["message_bytes_ram"] = info.Counts.ActiveBytes
	obj["message_bytes_paged_out"] = 0
	obj["messages_ram"] = ready + unacked
	obj["messages_ready_ram"] = ready
	obj["messages_unacknowledged_ram"] = unacked
	obj["messages_paged_out"] = 0
	obj["consumers"] = len(consumers)
	obj["consumer_capacity"] = boolFloat(len(consumers) > 0)
	obj["consumer_utilisation"] = boolFloat(len(consumers) > 0)
	obj["exclusive_consumer_tag"] = exclusiveTag
	obj["single_active_consumer_tag"] = nil
	if q.singleActive && len(consumers) > 0 {
		obj["single_active_consumer_tag"] = consumers[0].tag
	}
	obj["head_message_timestamp"] = nil
	obj["recoverable_slaves"] = nil
	obj["memory"] = info.Counts.ActiveBytes
	if st.MaxPriority != nil {
		obj["backing_queue_status"] = m.priorityStatus(q, *st.MaxPriority, ready)
	}
	if len(consumers) == 0 {
		obj["idle_since"] = formatTime(info.LastUsed)
	}
	if full {
		details := make([]map[string]any, 0, len(consumers))
		for i, cs := range consumers {
			details = append(details, consumerJSON(cs, i))
		}
		obj["consumer_details"] = details
		obj["deliveries"] = []any{}
		obj["incoming"] = []any{}
	}
	return obj, true
}

// priorityStatus is the part of a priority queue's backing_queue_status
// lapse has figures for (RB-14): len, its ready messages, and
// priority_lengths, those of each priority from 0 to the queue's maximum,
// as RabbitMQ 3.10's rabbit_priority_queue reports them. The rest of a
// classic queue's backing queue status (its paging state, rates) has no
// meaning in lapse and is not served, for priority queues or others.
func (m *Management) priorityStatus(q *queue, maxPriority int64, ready int) map[string]any {
	counts := make([]int, maxPriority+1)
	m.s.e.Scan(m.s.now(), q.key, 0, func(it *core.Item) bool {
		if it.State == core.Active {
			p, _ := strconv.Atoi(it.Group) // "" is 0 (priorityGroup)
			if p >= 0 && p < len(counts) {
				counts[p]++
			}
		}
		return true
	})
	lengths := make(map[string]any, len(counts))
	for p, n := range counts {
		lengths[strconv.Itoa(p)] = n
	}
	return map[string]any{"len": ready, "priority_lengths": lengths}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolFloat(b bool) float64 {
	if b {
		return 1.0
	}
	return 0.0
}

// vhostParam returns the path's vhost and whether it exists; a path
// without one is every vhost ("").
func (m *Management) vhostParam(c *gin.Context) (string, bool) {
	vh, has := m.pathVhost(c)
	if !has {
		return "", true
	}
	return vh, m.s.lookupVhost(vh) != nil
}

// GET /api/queues[/{vhost}]
func (m *Management) listQueues(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	u := m.user(c)
	stats := c.Query("disable_stats") != "true"
	items := []map[string]any{}
	for _, q := range m.s.queuesIn(vh) {
		if !u.seesVhost(q.vhost) {
			continue
		}
		if obj, ok := m.queueJSON(q, false, stats); ok {
			items = append(items, obj)
		}
	}
	m.replyList(c, items, []string{"vhost", "name"}, true)
}

// pathQueue returns the path's queue, or the 404 of a missing vhost or
// queue.
func (m *Management) pathQueue(c *gin.Context) (*queue, error) {
	vh, ok := m.vhostParam(c)
	if !ok {
		return nil, errObjectNotFound
	}
	q := m.s.findQueue(vh, m.param(c, "name"))
	if q == nil {
		return nil, errObjectNotFound
	}
	return q, nil
}

// GET /api/queues/{vhost}/{name}
func (m *Management) getQueue(c *gin.Context) {
	q, err := m.pathQueue(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	obj, ok := m.queueJSON(q, true, c.Query("disable_stats") != "true")
	if !ok {
		m.writeError(c, errObjectNotFound)
		return
	}
	m.reply(c, obj)
}

// maxQueueName is the longest queue name (rabbit_parameter_validation:
// amqp091_queue_name).
const maxQueueName = 255

// PUT /api/queues/{vhost}/{name}: queue.declare. Like RabbitMQ's, the API
// cannot declare exclusive queues: "exclusive" in the body is ignored.
func (m *Management) putQueue(c *gin.Context) {
	name := m.param(c, "name")
	if len(name) > maxQueueName {
		m.writeError(c, badRequest(fmt.Sprintf("queue should be less than 255 bytes, actually was %d\n", len(name))))
		return
	}
	vh, ok := m.vhostParam(c)
	if !ok {
		m.writeError(c, errVhostNotFound)
		return
	}
	body, err := readBody(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	decl := &wire.QueueDeclare{Queue: name}
	if decl.Durable, err = bodyBool(body, "durable"); err == nil {
		if decl.AutoDelete, err = bodyBool(body, "auto_delete"); err == nil {
			decl.Arguments, err = jsonToTable(body["arguments"])
		}
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	if err := m.permitted(c, vh, configure, "queue", name); err != nil {
		m.writeError(c, directError(err))
		return
	}
	existed := m.s.findQueue(vh, name) != nil
	if _, _, _, err := m.s.queueDeclare(nil, vh, decl); err != nil {
		m.writeError(c, directError(err))
		return
	}
	created(c, existed)
}

// DELETE /api/queues/{vhost}/{name}[?if-unused=true&if-empty=true]
func (m *Management) deleteQueue(c *gin.Context) {
	q, err := m.pathQueue(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	if err := m.permitted(c, q.vhost, configure, "queue", q.name); err != nil {
		m.writeError(c, directError(err))
		return
	}
	if _, err := m.s.queueDelete(nil, q.vhost, q.name, c.Query("if-unused") == "true", c.Query("if-empty") == "true"); err != nil {
		m.writeError(c, directError(err))
		return
	}
	noContent(c)
}

// DELETE /api/queues/{vhost}/{name}/contents: queue.purge.
func (m *Management) purgeQueue(c *gin.Context) {
	q, err := m.pathQueue(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	if err := m.permitted(c, q.vhost, read, "queue", q.name); err != nil {
		m.writeError(c, directError(err))
		return
	}
	if _, err := m.s.queuePurge(nil, q.vhost, q.name); err != nil {
		m.writeError(c, directError(err))
		return
	}
	noContent(c)
}

// The ackmodes of POST /api/queues/{vhost}/{name}/get.
const (
	ackRequeueTrue     = "ack_requeue_true"
	ackRequeueFalse    = "ack_requeue_false"
	rejectRequeueTrue  = "reject_requeue_true"
	rejectRequeueFalse = "reject_requeue_false"
)

// POST /api/queues/{vhost}/{name}/get: basic.get count times on a channel
// of its own, as rabbit_mgmt_wm_queue_get does. ack_requeue_false gets
// with no-ack; the other modes get with acks and, when done, requeue the
// messages (as closing that channel does) or reject them (dead-lettering
// them with reason rejected for reject_requeue_false).
func (m *Management) getMessages(c *gin.Context) {
	vh, ok := m.vhostParam(c)
	if !ok {
		// RabbitMQ's API cannot open its channel to a missing vhost.
		m.writeError(c, errAccessRefused)
		return
	}
	name := m.param(c, "name")
	body, err := readBody(c)
	if err == nil {
		err = requireKeys(body, "ackmode", "count", "encoding")
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	ackmode, _ := body["ackmode"].(string)
	switch ackmode {
	case ackRequeueTrue, ackRequeueFalse, rejectRequeueTrue, rejectRequeueFalse:
	default:
		// RabbitMQ crashes (500) on an unknown ackmode.
		m.writeError(c, badRequest("Unsupported ackmode. Please use ack_requeue_true, ack_requeue_false, "+
			"reject_requeue_true or reject_requeue_false."))
		return
	}
	count, err := parseInt(body["count"])
	if err != nil {
		m.writeError(c, err)
		return
	}
	encoding, _ := body["encoding"].(string)
	if encoding != "auto" && encoding != "base64" {
		m.writeError(c, badRequest("Unsupported encoding. Please use auto or base64."))
		return
	}
	truncate := int64(-1)
	if v := body["truncate"]; v != nil {
		if truncate, err = parseInt(v); err != nil {
			m.writeError(c, err)
			return
		}
	}
	if err := m.permitted(c, vh, read, "queue", name); err != nil {
		m.writeError(c, channelReplyError(err))
		return
	}
	q, err := m.s.lookupQueue(nil, vh, name)
	if err != nil {
		m.writeError(c, channelReplyError(err))
		return
	}
	e, now := m.s.e, m.s.now()
	out := []map[string]any{}
	var held []*core.Item
	// A negative count gets until the queue is empty, as RabbitMQ's loop
	// does.
	for n := count; n != 0; n-- {
		var (
			it    core.Item
			found bool
		)
		if ackmode == ackRequeueFalse {
			it, found, _, err = e.Take(now, q.key)
		} else {
			it, found, err = e.Receive(now, q.key, zeroTime)
		}
		if err != nil {
			err = channelReplyError(notFoundQueue(vh, name))
			break
		}
		if !found {
			break
		}
		if ackmode != ackRequeueFalse {
			held = append(held, &it)
		}
		cnt, _, _ := e.Counts(now, q.key)
		out = append(out, messageJSON(q, it, cnt.Active, encoding, truncate))
	}
	for _, it := range held {
		if ackmode == rejectRequeueFalse {
			e.DeadLetter(now, q.key, it.Seq, core.DeadLetterReason{Code: "rejected",
				Description: "rejected through the management API without requeue", Rule: "RB-9"})
		} else {
			// A return like a client's requeue: a quorum queue counts it
			// towards its delivery limit, as RabbitMQ 3.10 does.
			q.giveBack(now, it.Seq, it.DeliveryCount)
		}
	}
	if len(held) > 0 {
		q.signal()
	}
	if err != nil {
		m.writeError(c, err)
		return
	}
	m.writeJSON(c, http.StatusOK, out)
}

// messageJSON is a message of q as POST .../get shows it: with the
// properties a basic.get delivers (a quorum queue's x-delivery-count).
func messageJSON(q *queue, it core.Item, remaining int, encoding string, truncate int64) map[string]any {
	meta, _ := parseMeta(it.Meta)
	props, err := wire.DecodeProperties(q.deliveryProps(meta.props, &it, true))
	var propsJSON any = []any{}
	if err == nil {
		propsJSON = propertiesJSON(&props)
	}
	payload := it.Body
	if truncate >= 0 && int64(len(payload)) > truncate {
		payload = payload[:truncate]
	}
	obj := map[string]any{
		"payload_bytes": len(it.Body),
		"redelivered":   it.DeliveryCount > 1,
		"exchange":      string(meta.exchange),
		"routing_key":   string(meta.key),
		"message_count": remaining,
		"properties":    propsJSON,
	}
	if encoding == "auto" && utf8.Valid(payload) {
		obj["payload"], obj["payload_encoding"] = string(payload), "string"
	} else {
		obj["payload"], obj["payload_encoding"] = base64.StdEncoding.EncodeToString(payload), "base64"
	}
	return obj
}

// propertiesJSON writes basic properties as rabbit_mgmt_format:
// basic_properties does: the properties that are set; no property at all
// is an empty list, [], as RabbitMQ's JSON encoder writes an empty
// proplist.
func propertiesJSON(p *wire.Properties) any {
	obj := map[string]any{}
	f := p.Flags
	str := func(flag uint16, key, v string) {
		if f&flag != 0 {
			obj[key] = v
		}
	}
	str(wire.FlagContentType, "content_type", p.ContentType)
	str(wire.FlagContentEncoding, "content_encoding", p.ContentEncoding)
	if f&wire.FlagHeaders != 0 {
		obj["headers"] = tableJSON(p.Headers)
	}
	if f&wire.FlagDeliveryMode != 0 {
		obj["delivery_mode"] = p.DeliveryMode
	}
	if f&wire.FlagPriority != 0 {
		obj["priority"] = p.Priority
	}
	str(wire.FlagCorrelationID, "correlation_id", p.CorrelationID)
	str(wire.FlagReplyTo, "reply_to", p.ReplyTo)
	str(wire.FlagExpiration, "expiration", p.Expiration)
	str(wire.FlagMessageID, "message_id", p.MessageID)
	if f&wire.FlagTimestamp != 0 {
		obj["timestamp"] = p.Timestamp.Unix()
	}
	str(wire.FlagType, "type", p.Type)
	str(wire.FlagUserID, "user_id", p.UserID)
	str(wire.FlagAppID, "app_id", p.AppID)
	str(wire.FlagClusterID, "cluster_id", p.ClusterID)
	if len(obj) == 0 {
		return []any{}
	}
	return obj
}

// permitted checks that the request's user may configure, write or read
// the named resource of vhost vh, as the channel RabbitMQ's API runs the
// operation on checks it; a refusal is a 403 ACCESS_REFUSED error.
func (m *Management) permitted(c *gin.Context, vh string, what access, kind, name string) error {
	u := m.user(c)
	p, ok := u.Permissions[vh]
	if !ok {
		return channelError(wire.AccessRefused, "access to vhost '%s' refused for user '%s'", vh, u.Name)
	}
	pattern := [...]string{p.Configure, p.Write, p.Read}[what]
	if pattern == ".*" {
		return nil
	}
	if pattern != "" {
		if re, err := m.s.patterns.get(pattern); err == nil && re.MatchString(name) {
			return nil
		}
	}
	return channelError(wire.AccessRefused, "access to %s refused for user '%s'", rs(kind, name, vh), u.Name)
}

// GET /api/queues/{vhost}/{name}/bindings
func (m *Management) listQueueBindings(c *gin.Context) {
	q, err := m.pathQueue(c)
	if err != nil {
		m.writeError(c, err)
		return
	}
	items := []map[string]any{}
	for _, b := range m.s.bindingsIn(q.vhost) {
		if b.destType == "queue" && b.dest == q.name {
			items = append(items, bindingJSON(b))
		}
	}
	m.replyList(c, items, bindingSort(), false)
}

// formatTime writes a time as RabbitMQ 3.10's API does.
func formatTime(t time.Time) string { return t.UTC().Format(idleSinceLayout) }

package difftest

import (
	amqp "github.com/rabbitmq/amqp091-go"
)

// The connection scenarios pin how the management API shows connections,
// their channels and consumers, and how it closes a connection (issue
// 13.7): what tools and tests that find a connection by its
// connection_name and drop it rely on.

func connectionScenarios() []Scenario {
	return []Scenario{
		{Name: "ManagementConnectionChannelsConsumers", Management: true, Run: managementConnectionChannelsConsumers},
		{Name: "ManagementTrailingSlash", Management: true, Run: managementTrailingSlash},
		{Name: "ManagementDeleteConnection", Management: true, Run: managementDeleteConnection},
		{Name: "ManagementRecoverByConnectionName", Management: true, Run: managementRecoverByConnectionName},
	}
}

// managementConnectionChannelsConsumers pins GET /api/connections, the
// connection's own page, its channels and GET /api/consumers: their fields
// and values (issue 13.7). The client properties are amqp091-go's, with
// the connection_name the harness gives.
func managementConnectionChannelsConsumers(s *S) {
	q := s.Queue("q")
	c := s.Conn()
	ch := c.Ch()
	ch.Queue(q, nil)
	ch.Qos(3)
	ch.Consume(q, "c1", COpts{Args: amqp.Table{"x-priority": int32(5)}})
	confirming := c.Ch()
	confirming.Confirm()
	tx := c.Ch()
	tx.Tx()
	c.Info(3)
	c.Page()
	c.Channels(1, 0, 0)
	c.Consumer("c1")
}

// managementTrailingSlash pins paths with a trailing slash: served as the
// path without it, not redirected (issue 13.7).
func managementTrailingSlash(s *S) {
	q := s.Queue("q")
	c := s.Conn()
	ch := c.Ch()
	ch.Queue(q, nil)
	ch.Consume(q, "c1", COpts{})
	c.Info(1)
	c.Slash("/api/connections", "/api/connections/{name}", "/api/connections/{name}/channels",
		"/api/vhosts/%2F/connections", "/api/channels", "/api/consumers", "/api/consumers/%2F",
		"/api/queues/%2F/"+q)
}

// managementDeleteConnection pins DELETE /api/connections/{name}: 204, and
// the client's connection is closed with 320 CONNECTION_FORCED and the
// X-Reason header's text, or "Closed via management plugin" without one; a
// name that is no connection's is 404 (issue 13.7).
func managementDeleteConnection(s *S) {
	for _, reason := range []string{"", "maintenance window"} {
		c := s.Conn()
		c.Info(0)
		c.Delete(reason)
		s.CountListed(c.name, 0)
	}
	status, body := s.mgmtWith("DELETE", "/api/connections/"+s.Name("nobody"), "")
	s.Note("DELETE /api/connections/{nobody}: %d %s", status, errorReason(body))
}

// managementRecoverByConnectionName pins what a client's connection
// recovery meets (issue 13.7): a test finds the connection by its
// connection_name and drops it through the API; the client connects again
// under the same name, declares and consumes again, and messages flow; the
// API then lists one connection of that name, the new one.
func managementRecoverByConnectionName(s *S) {
	q := s.Queue("q")
	name := s.Name("app")
	c := s.ConnNamed(name)
	ch := c.Ch()
	ch.Queue(q, nil)
	cs := ch.Consume(q, "c1", COpts{AutoAck: true})
	ch.Publish("", q, Msg{Body: "before"})
	cs.Next()
	c.Info(1)
	c.Delete("recovery test")
	cs.Next()
	// What a recovering client does: the same name, the same topology.
	again := s.ConnNamed(name)
	ch = again.Ch()
	ch.Queue(q, nil)
	cs = ch.Consume(q, "c1", COpts{AutoAck: true})
	ch.Publish("", q, Msg{Body: "after"})
	cs.Next()
	s.CountListed(name, 1)
	again.Info(1)
}

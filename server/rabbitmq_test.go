package server

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A definitions.json given with --rabbitmq-definitions is declared at start
// and again after a reset: its users log in, its queues are there with
// their arguments.
func TestRabbitMQDefinitionsFile(t *testing.T) {
	defs := filepath.Join(t.TempDir(), "definitions.json")
	mustWrite(t, defs, `{
	  "users": [{"name": "app", "password": "secret", "tags": ["management"]}],
	  "vhosts": [{"name": "/"}],
	  "permissions": [{"user": "app", "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}],
	  "queues": [{"name": "orders", "vhost": "/", "durable": true, "auto_delete": false,
	              "arguments": {"x-message-ttl": 60000}}]
	}`)
	m := MustStart(t, "--rabbitmq-definitions", defs)
	url := "amqp://app:secret@" + dialable(m.amqp.Addr().String()) + "/"
	check := func(when string) {
		t.Helper()
		conn, err := amqp.Dial(url)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		// A redeclare with the file's arguments is equivalent (the JSON
		// integer is a long, like any other width of the same number).
		if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000)}); err != nil {
			t.Fatalf("%s: declaring the file's queue: %v", when, err)
		}
	}
	check("at start")
	a := MustAPI(t, m)
	if status := a.post("/api/reset", "", nil); status != 200 {
		t.Fatalf("reset: %d", status)
	}
	check("after a reset")
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A file that is not valid JSON stops lapse at start.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	m2 := NewMain()
	m2.Stderr = io.Discard
	if err := m2.ParseFlags(serveArgs(filepath.Join(t.TempDir(), "data"), "--rabbitmq-definitions", bad), noEnv); err != nil {
		t.Fatal(err)
	}
	if err := m2.Run(context.Background()); err == nil {
		m2.Close(context.Background())
		t.Fatal("lapse started with a broken definitions file")
	}
}

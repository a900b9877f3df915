// Command app is the second service of lapse's docker-compose.yml: a
// program that uses lapse the way an application in another container does.
// It reaches lapse by its compose service name, sends one message or
// document to each protocol with the official Go SDKs, moves lapse's clock
// past their time-to-live through the control API and prints what expired.
// It exits 1 if anything did not expire as the entity files say it should.
//
// The entities come from the files docker-compose.yml mounts into lapse
// (examples/config): the Service Bus queue "orders" (Config.json,
// DefaultMessageTimeToLive PT1H, dead-lettering on expiration), the
// RabbitMQ queue "orders" whose expired messages go to "orders.expired"
// (definitions.json, x-message-ttl one hour) and the Cosmos DB container
// shop/carts (cosmos.json, defaultTtl 3600 s).
//
// Environment (defaults for docker-compose.yml):
//
//	LAPSE_HOST          lapse's host name (lapse)
//	LAPSE_AMQP_PORT     AMQP port: Service Bus and RabbitMQ (5672)
//	LAPSE_COSMOS_PORT   Cosmos DB port (8081)
//	LAPSE_CONTROL_PORT  control API port (8080)
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/google/uuid"
)

// advanceBy is how far the app moves lapse's clock: past the one hour that
// each of the three entities keeps an item.
const advanceBy = "61m"

func main() {
	if err := run(context.Background(), os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "app:", err)
		os.Exit(1)
	}
}

// endpoints are where lapse's protocols are, as an application is told.
type endpoints struct {
	// ServiceBus is the connection string of the Service Bus SDKs.
	ServiceBus string
	// RabbitMQ is the AMQP 0-9-1 URL of the RabbitMQ clients.
	RabbitMQ string
	// Cosmos is the Cosmos DB account endpoint (HTTPS, lapse's certificate).
	Cosmos string
	// Control is the base URL of lapse's control API.
	Control string
}

// endpointsFrom reads the host and ports from getenv.
func endpointsFrom(getenv func(string) string) endpoints {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	host := env("LAPSE_HOST", "lapse")
	amqpPort := env("LAPSE_AMQP_PORT", "5672")
	// The Service Bus emulator's connection string names no port: 5672 is
	// AMQP's. Another port goes after the host.
	sbHost := host
	if amqpPort != "5672" {
		sbHost = net.JoinHostPort(host, amqpPort)
	}
	return endpoints{
		ServiceBus: "Endpoint=sb://" + sbHost + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
		RabbitMQ:   "amqp://guest:guest@" + net.JoinHostPort(host, amqpPort) + "/",
		Cosmos:     "https://" + net.JoinHostPort(host, env("LAPSE_COSMOS_PORT", "8081")) + "/",
		Control:    "http://" + net.JoinHostPort(host, env("LAPSE_CONTROL_PORT", "8080")),
	}
}

// run sends one item to each protocol, advances the clock, checks that
// each item expired as its entity says and prints what happened to out.
func run(ctx context.Context, getenv func(string) string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	ep := endpointsFrom(getenv)
	fmt.Fprintf(out, "Service Bus: %s\nRabbitMQ:    %s\nCosmos DB:   %s\ncontrol API: %s\n", ep.ServiceBus, ep.RabbitMQ, ep.Cosmos, ep.Control)

	control := newControl(ep.Control)
	// Cosmos DB is HTTPS with lapse's own certificate: trust the one lapse
	// serves at GET /cert.pem (it covers the compose service name through
	// LAPSE_CERT_HOSTS).
	tlsConfig, err := control.trust(ctx)
	if err != nil {
		return err
	}

	// One id per run: a second run finds the first run's dead letters too.
	id := "app-" + uuid.NewString()[:8]
	sb, err := newServiceBus(ep.ServiceBus)
	if err != nil {
		return err
	}
	defer sb.close()
	rmq, err := newRabbitMQ(ep.RabbitMQ)
	if err != nil {
		return err
	}
	defer rmq.close()
	cdb, err := newCosmos(ep.Cosmos, tlsConfig)
	if err != nil {
		return err
	}

	if err := sb.send(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "sent: Service Bus message %s to queue orders (DefaultMessageTimeToLive PT1H)\n", id)
	if err := rmq.publish(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "sent: RabbitMQ message %s to queue orders (x-message-ttl 3600000 ms)\n", id)
	if err := cdb.create(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "sent: Cosmos DB item %s to shop/carts (defaultTtl 3600 s)\n", id)

	lastEvent, err := control.lastEventID(ctx)
	if err != nil {
		return err
	}
	now, err := control.advance(ctx, advanceBy)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "clock: advanced by %s to %s\n", advanceBy, now)

	reason, err := sb.deadLetter(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "expired: Service Bus message %s is in orders/$deadletterqueue (DeadLetterReason %s)\n", id, reason)
	reason, err = rmq.deadLetter(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "expired: RabbitMQ message %s is in orders.expired (x-death reason %s)\n", id, reason)
	if err := cdb.gone(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "expired: Cosmos DB item %s is gone from shop/carts (404)\n", id)

	events, err := control.eventsSince(ctx, lastEvent)
	if err != nil {
		return err
	}
	for _, e := range events {
		fmt.Fprintf(out, "event %d: %s %s %s by rule %s: %s\n", e.ID, e.Protocol, e.Entity, e.Action, e.Rule, e.Reason)
	}
	return nil
}

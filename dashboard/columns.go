package dashboard

import (
	"strings"

	"github.com/lapse-emulator/lapse/core"
)

// columns say which of an entity's figures a protocol has, in its own
// words, for the overview's rows and an entity's page: a Cosmos DB
// container has items and nothing scheduled, locked, deferred or
// dead-lettered; a RabbitMQ queue has ready and unacknowledged messages.
type columns struct {
	// Active is the word for the available items.
	Active string
	// Locked is the word for the items handed out and not yet settled; ""
	// for a protocol without them.
	Locked string
	// Scheduled and Deferred say whether the protocol has items in these
	// states.
	Scheduled, Deferred bool
	// InDeadLetterQueue says whether an entity may have a dead-letter queue
	// of its own, whose items it counts (counts.inDeadLetterQueue, now).
	InDeadLetterQueue bool
	// DeadLettered says whether items can be dead-lettered out of an
	// entity (stats.deadLettered, since it was created or lapse started).
	DeadLettered bool
	// Consumers says whether an entity has consumers.
	Consumers bool
	// Delivered is the word for the items handed to consumers; "" for a
	// protocol without consumers.
	Delivered string
	// Received is the word for the items that came in.
	Received string
	// PurgeReadyOnly says that a purge leaves the unacknowledged items to
	// their consumers (purgesReadyOnly).
	PurgeReadyOnly bool
}

// columnsOf returns the columns of protocol p; a protocol the dashboard
// does not know gets every column, in core's words.
func columnsOf(p string) columns {
	switch p {
	case core.ServiceBus:
		return columns{Active: "Active", Locked: "Locked", Scheduled: true, Deferred: true, InDeadLetterQueue: true,
			DeadLettered: true, Consumers: true, Delivered: "delivered", Received: "received"}
	case core.RabbitMQ:
		return columns{Active: "Ready", Locked: "Unacked", DeadLettered: true, Consumers: true,
			Delivered: "delivered", Received: "received", PurgeReadyOnly: purgesReadyOnly(p)}
	case core.Cosmos:
		return columns{Active: "Items", Received: "written"}
	}
	return columns{Active: "Active", Locked: "Locked", Scheduled: true, Deferred: true, InDeadLetterQueue: true,
		DeadLettered: true, Consumers: true, Delivered: "delivered", Received: "received", PurgeReadyOnly: purgesReadyOnly(p)}
}

// builtin reports whether e is one of the broker's own entities, which
// every RabbitMQ has and the overview folds away unless asked: the default
// vhost "/" and the amq.* exchanges of each vhost (RabbitMQ declares them
// and refuses any other amq.* name).
func builtin(e *EntityView) bool {
	if e.Protocol != core.RabbitMQ {
		return false
	}
	switch e.Kind {
	case "vhost":
		return e.Name == "vhost:/"
	case "exchange":
		// exchange:{vhost}/{name}, with no '/' in the vhost part.
		_, name, ok := strings.Cut(e.Name, "/")
		return ok && strings.HasPrefix(name, "amq.")
	}
	return false
}

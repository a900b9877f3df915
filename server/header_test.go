package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// issue 13.4: every protocol header goes where RabbitMQ 3.10 (for 0-9-1 and
// its relatives) and Service Bus (for AMQP 1.0) would take it.
func TestClassifyHeader(t *testing.T) {
	h := func(b ...byte) [8]byte { return [8]byte{'A', 'M', 'Q', 'P', b[0], b[1], b[2], b[3]} }
	type result struct {
		Route  headerRoute
		HandOn [8]byte
	}
	for _, tc := range []struct {
		name   string
		header [8]byte
		want   result
	}{
		{"AMQP091", h(0, 0, 9, 1), result{routeRabbitMQ, h(0, 0, 9, 1)}},
		{"AMQP09ServedAs091", h(1, 1, 0, 9), result{routeRabbitMQ, h(0, 0, 9, 1)}},
		{"AMQP10WithoutSASL", h(0, 1, 0, 0), result{routeServiceBus, h(0, 1, 0, 0)}},
		{"AMQP10WithSASL", h(3, 1, 0, 0), result{routeServiceBus, h(3, 1, 0, 0)}},
		{"AMQP10TLSUpgradeGetsSASL", h(2, 1, 0, 0), result{routeRefuse, h(3, 1, 0, 0)}},
		{"AMQP08Refused", h(1, 1, 8, 0), result{routeRefuse, h(0, 0, 9, 1)}},
		{"AMQP08AsOnTheWebsiteRefused", h(1, 1, 9, 1), result{routeRefuse, h(0, 0, 9, 1)}},
		{"AMQP090WrongLayout", h(0, 0, 9, 0), result{routeRefuse, h(0, 0, 9, 1)}},
		{"AMQP100Revision1", h(0, 1, 0, 1), result{routeRefuse, h(0, 0, 9, 1)}},
		{"AMQP10UnknownProtocolID", h(4, 1, 0, 0), result{routeRefuse, h(0, 0, 9, 1)}},
		{"NotAMQP", [8]byte{'G', 'E', 'T', ' ', '/', ' ', 'H', 'T'}, result{routeRefuse, h(0, 0, 9, 1)}},
		{"LowerCase", [8]byte{'a', 'm', 'q', 'p', 0, 0, 9, 1}, result{routeRefuse, h(0, 0, 9, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got result
			got.Route, got.HandOn = classifyHeader(tc.header)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("classifyHeader(%q) (-want +got):\n%s", tc.header[:], diff)
			}
		})
	}
}

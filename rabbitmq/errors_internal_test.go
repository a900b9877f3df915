package rabbitmq

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/rabbitmq/wire"
)

func TestEveryErrorBecomesAReplyWithoutATypeAssertion(t *testing.T) {
	// issue 16.3: publish and the queue calls turned a helper's error into
	// a reply with err.(*amqpError), which panics on any other error (a
	// wrapped reply, an engine error); fromCore now maps every error, and
	// keeps a wrapped reply's code and text.
	wrapped := fmt.Errorf("checking the exchange: %w", notFoundExchange("/", "x"))
	for _, tc := range []struct {
		name string
		err  error
		code uint16
		conn bool
	}{
		{"WrappedReplyKeepsItsCode", wrapped, wire.NotFound, false},
		{"ReplyAsIs", channelError(wire.AccessRefused, "no"), wire.AccessRefused, false},
		{"EngineNotFound", core.Errorf(core.ENOTFOUND, "gone"), wire.NotFound, false},
		{"AnyOtherErrorIsInternal", errors.New("disk on fire"), wire.InternalError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromCore(tc.err)
			if got == nil || got.code != tc.code || got.conn != tc.conn {
				t.Fatalf("fromCore(%v) = %+v; want code %d, connection error %v", tc.err, got, tc.code, tc.conn)
			}
		})
	}
	if got := fromCore(wrapped); got.text != "NOT_FOUND - no exchange 'x' in vhost '/'" {
		t.Errorf("the wrapped reply's text = %q", got.text)
	}
}

// Command lapse-bench runs the same load against lapse and against the
// services it emulates: AMQP 0-9-1 against lapse's RabbitMQ front-end and
// a real RabbitMQ, AMQP 1.0 against lapse's Service Bus front-end and
// RabbitMQ's rabbitmq_amqp1_0 plugin, the azservicebus SDK against lapse,
// and the azcosmos SDK against lapse's Cosmos DB front-end. It links the
// client SDKs, which the lapse server binary does not.
//
//	go run ./cmd/lapse-bench [flags]     (-h lists the flags)
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lapse-emulator/lapse/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runBench(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseFlags parses args with fs and returns the positional arguments
// (server.ParseArgs, as lapse's own commands do); a mistake is a usageError.
func parseFlags(fs *flag.FlagSet, args []string, interleaved bool, help io.Writer) ([]string, error) {
	pos, err := server.ParseArgs(fs, args, interleaved, help)
	if ue, ok := errors.AsType[*server.UsageError](err); ok {
		return nil, &usageError{ue.Error()}
	}
	return pos, err
}

// oneLine returns err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

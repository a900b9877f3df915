// Command lapse emulates Azure Service Bus, RabbitMQ and Azure Cosmos DB
// for testing expiry, with one clock that the control API can move.
//
//	lapse [serve] [flags]     run lapse (the default command)
//	lapse version             print the version
//	lapse clock [advance D | freeze | resume | set TIME]
//	lapse events [--since N] [--protocol P] [--entity E] [--limit N]
//	lapse healthcheck         exit 0 when a running lapse answers /healthz
//	lapse help [COMMAND]      what lapse or COMMAND does and takes (also -h)
//
// The commands after serve talk to a running lapse's control API at
// --control-url (env LAPSE_CONTROL_URL, default http://localhost:8080).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/internal/gcfloor"
	"github.com/lapse-emulator/lapse/server"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// shutdownTimeout bounds a graceful shutdown.
const shutdownTimeout = 10 * time.Second

func main() {
	// gin chooses its mode from GIN_MODE at init and prints every route in
	// debug mode; lapse logs through slog only.
	gin.SetMode(gin.ReleaseMode)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the exit code: 0 for success,
// 1 for a failure, 2 for a mistake on the command line.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	// -h of a command writes its help to stdout (the flag package would
	// write the flags alone, to stderr); bench has its own.
	if cmd != "bench" && cmd != "help" && wantsHelp(args) && writeHelp(stdout, cmd, args) {
		return 0
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, getenv, stderr)
	case "version":
		fmt.Fprintf(stdout, "lapse %s (%s)\n", version, runtimeVersion())
	case "clock", "events", "healthcheck":
		err = clientCommand(ctx, cmd, args, getenv, stdout, stderr)
	case "bench":
		// The benchmark client links the client SDKs, which the server
		// binary leaves out (issue 15.9).
		fmt.Fprintln(stderr, "lapse: the benchmark client is its own command now: "+strings.TrimSpace("go run ./cmd/lapse-bench "+strings.Join(args, " ")))
		return 2
	case "help":
		args = slices.DeleteFunc(args, isHelpFlag)
		if len(args) == 0 {
			fmt.Fprint(stdout, usage)
		} else if !writeHelp(stdout, args[0], args[1:]) {
			err = &usageError{fmt.Sprintf("no help for %q: it is not a command", args[0])}
		}
	default:
		err = &usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lapse: %s\n%s", oneLine(err), usage)
		return 2
	}
	// Errors joined (every listener that cannot bind) take a line each.
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "lapse: %s\n", oneLine(e))
	}
	return 1
}

// serve runs lapse until ctx ends (SIGINT or SIGTERM), then shuts down.
func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	m := server.NewMain()
	m.Stderr = stderr
	m.Version = version
	if err := m.ParseFlags(args, getenv); err != nil {
		return asUsage(err)
	}
	// lapse alone in its process: the GC may keep more headroom than
	// GOGC's (internal/gcfloor).
	defer gcfloor.Start(gcfloor.Floor).Stop()
	if err := m.Run(ctx); err != nil {
		return err
	}
	fmt.Fprint(stderr, m.Banner())
	<-ctx.Done()
	m.Logger.Info("shutting down")
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := m.Close(cctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	m.Logger.Info("stopped")
	return nil
}

// runtimeVersion is the Go version and platform lapse was built with.
func runtimeVersion() string {
	return runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// oneLine returns err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

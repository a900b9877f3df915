package main

import (
	"fmt"
	"io"

	"github.com/lapse-emulator/lapse/server"
)

// usage is what `lapse help`, `lapse -h` and `lapse --help` print, and
// what follows a mistake on the command line.
const usage = `lapse emulates Azure Service Bus, RabbitMQ and Azure Cosmos DB for tests
of expiry, with one clock that tests can move.

usage: lapse [command] [flags]

commands:
  serve         run lapse (the default: lapse [flags] is lapse serve [flags])
  clock         print the clock of a running lapse, or move it:
                lapse clock advance 15m | freeze | resume | set TIME
  events        print the expiry event log of a running lapse
  healthcheck   exit 0 when a running lapse answers (for container health checks)
  version       print the version
  help          print this; lapse help COMMAND is lapse COMMAND -h

lapse serve -h lists the flags of serve, each with its environment variable
and its default; lapse COMMAND -h says what COMMAND does and what it takes.
`

// controlURLHelp is the flag of every command that talks to a running lapse.
const controlURLHelp = `  --control-url URL
        URL of the control API of the running lapse
        env LAPSE_CONTROL_URL, default http://localhost:8080
`

// durationHelp says which durations lapse clock advance takes.
const durationHelp = `DURATION is one of:
  a Go duration     90s, 15m, 1h30m, 2h45m30.5s (units ns, us, ms, s, m, h)
  a number of days  14d, 1.5d
  ISO 8601          P14D, PT10M, P1DT2H, P2W (weeks, days, hours, minutes
                    and seconds; not years or months, which have no fixed length)
`

// clockHelp is `lapse clock -h`.
const clockHelp = `usage: lapse clock [advance DURATION | freeze | resume | set TIME] [--control-url URL]

Prints or moves the clock of a running lapse, which every expiry of every
protocol follows. Each prints the clock afterwards: its time (RFC 3339) and
its mode (real, frozen, or offset: running, ahead of the wall clock).

  lapse clock                print the clock
  lapse clock advance 15m    move it forward by a duration (lapse clock advance -h)
  lapse clock freeze         stop it: then only advance and set move it
  lapse clock resume         let it run again from where it stands
  lapse clock set TIME       jump to an RFC 3339 instant, never backwards

` + durationHelp + `
flags:
` + controlURLHelp

// clockSubHelp are the helps of lapse clock's commands.
var clockSubHelp = map[string]string{
	"advance": `usage: lapse clock advance DURATION [--control-url URL]

Moves the clock of a running lapse forward by DURATION, then prints the
clock and how many events (expiries, dead-letterings, idle deletions, lost
locks) the move applied. It returns once everything that fell due up to
the new time is applied, so a test can check the outcome at once.

` + durationHelp + `
example: lapse clock advance P14D

flags:
` + controlURLHelp,
	"freeze": `usage: lapse clock freeze [--control-url URL]

Stops the clock of a running lapse where it stands and prints it. A frozen
clock moves only with lapse clock advance and lapse clock set. Takes no
arguments.

flags:
` + controlURLHelp,
	"resume": `usage: lapse clock resume [--control-url URL]

Lets the clock of a running lapse run again, at the wall clock's pace, from
where it stands (ahead of the wall clock if it was moved: mode offset), and
prints it. Takes no arguments.

flags:
` + controlURLHelp,
	"set": `usage: lapse clock set TIME [--control-url URL]

Moves the clock of a running lapse to TIME, an RFC 3339 instant such as
2030-01-02T15:04:05Z, applies everything due by then, and prints it. The
clock never goes backwards.

flags:
` + controlURLHelp,
}

// commandHelp are the helps of the other commands.
var commandHelp = map[string]string{
	"clock": clockHelp,
	"events": `usage: lapse events [--since ID] [--protocol P] [--entity E] [--limit N] [--control-url URL]

Prints the expiry event log of a running lapse, oldest first, one line per
event with tab-separated fields: id, time, protocol, entity, item (its
sequence number; - for the entity itself), action (expired, dead-lettered,
deleted-idle, lock-lost), the ID of the rule that caused it (the
dashboard's Rules page explains each), and the reason.

flags:
  --since ID
        only events after the one with this ID (0: from the first)
  --protocol P
        only events of protocol P: servicebus, rabbitmq or cosmos
  --entity E
        only events of the entity named E
  --limit N
        at most N events (0: all)
` + controlURLHelp,
	"healthcheck": `usage: lapse healthcheck [--control-url URL]

Exits 0 when a running lapse answers GET /healthz on its control port
within 5 seconds, else prints why and exits 1. For container health checks:
the image has no shell nor curl.

flags:
` + controlURLHelp,
	"version": `usage: lapse version

Prints the version of lapse and the Go version and platform it was built
with. Takes no arguments nor flags.
`,
	"help": usage,
}

// isHelpFlag reports whether arg asks for help as the flag package does.
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "--h" || arg == "-help" || arg == "--help"
}

// wantsHelp reports whether args, a command's arguments, ask for help
// before a "--" that would end the flags.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

// writeHelp writes the help of command cmd, whose arguments are args (lapse
// clock's command is among them), and reports whether cmd has one.
func writeHelp(w io.Writer, cmd string, args []string) bool {
	switch cmd {
	case "serve":
		server.ServeHelp(w)
		return true
	case "clock":
		for _, a := range args {
			if h, ok := clockSubHelp[a]; ok {
				fmt.Fprint(w, h)
				return true
			}
		}
	}
	h, ok := commandHelp[cmd]
	if ok {
		fmt.Fprint(w, h)
	}
	return ok
}

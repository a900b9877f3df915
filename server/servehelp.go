package server

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// serveAbout says what `lapse serve` does, for `lapse serve -h`.
const serveAbout = `usage: lapse [serve] [flags]

Runs lapse until Ctrl-C or SIGTERM: Service Bus (AMQP 1.0) and RabbitMQ
(AMQP 0-9-1) on one AMQP port, Cosmos DB (REST), the Service Bus
administration and RabbitMQ management APIs, and the dashboard with the
control API, all on one clock. Once every port is bound it prints where
each is, with the connection strings to use. An address of :0 picks a
free port.

Every flag can also be set with its environment variable; a flag given on
the command line wins.

flags:
`

// flagValueNames are the placeholders of the flags' values in the help.
var flagValueNames = map[string]string{
	"data": "DIR", "clock": "MODE", "log-level": "LEVEL", "cosmos-key": "KEY", "cert-hosts": "HOSTS",
	"servicebus-config": "FILE", "rabbitmq-definitions": "FILE", "cosmos-config": "FILE",
	"servicebus-max-message-size": "BYTES",
}

// ServeHelp writes what `lapse serve -h` prints: what serve does, then
// every flag with its environment variable and its default.
func ServeHelp(w io.Writer) {
	var c Config
	var level string
	// No environment: the defaults shown are lapse's own.
	fs := newServeFlags(&c, &level, func(string) string { return "" })
	fmt.Fprint(w, serveAbout)
	fs.VisitAll(func(f *flag.Flag) {
		value := flagValueNames[f.Name]
		if value == "" && strings.HasSuffix(f.Name, "-addr") {
			value = "ADDR"
		}
		env := envName(f.Name)
		about := strings.TrimSuffix(f.Usage, " (env "+env+")")
		def := ", default " + f.DefValue
		switch {
		case f.DefValue == "" && strings.Contains(about, "(default: "):
			def = "" // the text says it
		case f.DefValue == "":
			def = ", default none"
		}
		name := "--" + f.Name
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			name += " " + value // a boolean flag takes no value
		}
		fmt.Fprintf(w, "  %s\n        %s\n        env %s%s\n", name, about, env, def)
	})
}

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/lapse-emulator/lapse/server"
)

// issue 15.4: lapse -h, --help and help list every command and say how to
// see the flags; every command's -h says what it does and what it takes,
// on stdout, with exit 0.
func TestHelpOfEveryCommand(t *testing.T) {
	commands := []string{"serve", "clock", "events", "healthcheck", "version", "help", "lapse serve -h", "lapse COMMAND -h"}
	controlURL := []string{"--control-url URL", "LAPSE_CONTROL_URL", "http://localhost:8080"}
	durations := []string{"DURATION", "Go duration", "15m", "1h30m", "14d", "ISO 8601", "P14D", "PT10M", "P1DT2H"}
	// Every flag the server's parser knows, from the flag package's own
	// listing, and its environment variable.
	m := server.NewMain()
	var defaults bytes.Buffer
	m.Stderr = &defaults
	if err := m.ParseFlags([]string{"-h"}, noEnv); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("ParseFlags -h: %v", err)
	}
	var serveFlags []string
	for _, f := range regexp.MustCompile(`(?m)^  -([a-z-]+)( \S+)?$`).FindAllStringSubmatch(defaults.String(), -1) {
		after := " " // then its value
		if f[2] == "" {
			after = "\n" // a boolean flag takes none
		}
		serveFlags = append(serveFlags, "--"+f[1]+after, "LAPSE_"+strings.ToUpper(strings.ReplaceAll(f[1], "-", "_")))
	}
	if len(serveFlags) < 2*15 {
		t.Fatalf("the flags of lapse serve: %q from %s", serveFlags, defaults.String())
	}
	for _, c := range []struct {
		name string
		args []string
		want []string // in stdout
	}{
		{"DashH", []string{"-h"}, commands},
		{"DashDashHelp", []string{"--help"}, commands},
		{"DashHelp", []string{"-help"}, commands},
		{"Help", []string{"help"}, commands},
		{"HelpDashH", []string{"help", "-h"}, commands},
		{"Serve", []string{"serve", "-h"}, append([]string{"usage: lapse [serve] [flags]", "Runs lapse",
			"default :5672", "default :8080", "default ./lapse-data", "default real", "env LAPSE_COSMOS_KEY\n"}, serveFlags...)},
		{"ServeWithoutTheCommand", []string{"--amqp-addr", ":0", "--help"}, []string{"usage: lapse [serve] [flags]", "--amqp-addr ADDR"}},
		{"HelpServe", []string{"help", "serve"}, []string{"usage: lapse [serve] [flags]", "--data DIR"}},
		{"Clock", []string{"clock", "-h"}, append(append([]string{"usage: lapse clock", "advance", "freeze", "resume", "set TIME", "RFC 3339"}, durations...), controlURL...)},
		{"ClockAdvance", []string{"clock", "advance", "-h"}, append(append([]string{"usage: lapse clock advance DURATION", "P2W", "years or months"}, durations...), controlURL...)},
		{"ClockAdvanceFlagsFirst", []string{"clock", "--control-url", "http://x", "advance", "--help"}, []string{"usage: lapse clock advance DURATION"}},
		{"HelpClockAdvance", []string{"help", "clock", "advance"}, []string{"usage: lapse clock advance DURATION", "P14D"}},
		{"ClockSet", []string{"clock", "set", "-h"}, append([]string{"usage: lapse clock set TIME", "RFC 3339", "never goes backwards"}, controlURL...)},
		{"ClockFreeze", []string{"clock", "freeze", "-h"}, append([]string{"usage: lapse clock freeze", "Stops the clock"}, controlURL...)},
		{"ClockResume", []string{"clock", "resume", "-h"}, append([]string{"usage: lapse clock resume", "run again"}, controlURL...)},
		{"Events", []string{"events", "-h"}, append([]string{"usage: lapse events", "--since ID", "--protocol P", "--entity E", "--limit N",
			"servicebus, rabbitmq or cosmos", "tab-separated"}, controlURL...)},
		{"Healthcheck", []string{"healthcheck", "-h"}, append([]string{"usage: lapse healthcheck", "/healthz", "exits 1"}, controlURL...)},
		{"Version", []string{"version", "-h"}, []string{"usage: lapse version", "Prints the version"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), c.args, noEnv, &stdout, &stderr)
			if code != 0 || stderr.Len() != 0 {
				t.Errorf("lapse %s: exit %d, stderr %q", strings.Join(c.args, " "), code, stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("lapse %s: stdout lacks %q:\n%s", strings.Join(c.args, " "), w, stdout.String())
				}
			}
		})
	}
}

// issue 15.4: help of something that is not a command is a usage error.
func TestHelpOfAnUnknownCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"help", "rewind"}, noEnv, &stdout, &stderr)
	if first, _, _ := strings.Cut(stderr.String(), "\n"); code != 2 || first != `lapse: no help for "rewind": it is not a command` {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

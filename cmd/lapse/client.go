package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/dashboard"
	"github.com/lapse-emulator/lapse/internal/control"
)

// controlClient talks to a running lapse's control API.
type controlClient struct{ control.Client }

// clientCommand runs `lapse clock ...`, `lapse events ...` and
// `lapse healthcheck`. Flags may come before or after the arguments.
func clientCommand(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lapse "+cmd, flag.ContinueOnError)
	var base string
	envString(fs, getenv, &base, "control-url", "http://localhost:8080", "URL of a running lapse's control API")
	var since, limit uint64
	var protocol, entity string
	if cmd == "events" {
		fs.Uint64Var(&since, "since", 0, "only events with an ID above this")
		fs.StringVar(&protocol, "protocol", "", "only events of this protocol")
		fs.StringVar(&entity, "entity", "", "only events of this entity")
		fs.Uint64Var(&limit, "limit", 0, "at most this many events (0 for all)")
	}
	pos, err := parseFlags(fs, args, true, stderr)
	if err != nil {
		return err
	}
	timeout := time.Minute // an advance over millions of items takes a while
	if cmd == "healthcheck" {
		timeout = 5 * time.Second
	}
	c := &controlClient{control.Client{
		Base: strings.TrimSuffix(base, "/"),
		HTTP: &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}},
	}}
	switch cmd {
	case "healthcheck":
		if len(pos) > 0 {
			return &usageError{"healthcheck takes no arguments"}
		}
		return c.Do(ctx, http.MethodGet, "/healthz", nil, nil)
	case "events":
		if len(pos) > 0 {
			return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
		}
		q := url.Values{}
		if protocol != "" {
			q.Set("protocol", protocol)
		}
		if entity != "" {
			q.Set("entity", entity)
		}
		if since > 0 {
			q.Set("since", strconv.FormatUint(since, 10))
		}
		if limit > 0 {
			q.Set("limit", strconv.FormatUint(limit, 10))
		}
		path := "/api/events"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		var evs []core.Event
		if err := c.Do(ctx, http.MethodGet, path, nil, &evs); err != nil {
			return err
		}
		for _, ev := range evs {
			fmt.Fprintln(stdout, eventLine(ev))
		}
		return nil
	}
	return c.clock(ctx, pos, stdout)
}

// clock runs `lapse clock [advance D | freeze | resume | set TIME]`.
func (c *controlClient) clock(ctx context.Context, args []string, stdout io.Writer) error {
	var st dashboard.ClockState
	var err error
	switch {
	case len(args) == 0:
		err = c.Do(ctx, http.MethodGet, "/api/clock", nil, &st)
	case args[0] == "advance" && len(args) == 2:
		err = c.Do(ctx, http.MethodPost, "/api/clock/advance", map[string]string{"by": args[1]}, &st)
	case args[0] == "advance":
		return &usageError{"usage: lapse clock advance DURATION (15m, P14D)"}
	case args[0] == "set" && len(args) == 2:
		err = c.Do(ctx, http.MethodPost, "/api/clock/set", map[string]string{"now": args[1]}, &st)
	case args[0] == "set":
		return &usageError{"usage: lapse clock set TIME (RFC 3339)"}
	case (args[0] == "freeze" || args[0] == "resume") && len(args) == 1:
		err = c.Do(ctx, http.MethodPost, "/api/clock/"+args[0], nil, &st)
	case args[0] == "freeze" || args[0] == "resume":
		return &usageError{fmt.Sprintf("clock %s takes no arguments", args[0])}
	default:
		return &usageError{fmt.Sprintf("unknown clock command %q", args[0])}
	}
	if err != nil {
		return err
	}
	line := st.Now + " " + string(st.Mode)
	if st.Applied != nil {
		line += fmt.Sprintf(" (%d events applied)", *st.Applied)
	}
	fmt.Fprintln(stdout, line)
	return nil
}

// eventLine writes an event as one tab-separated line: id, time, protocol,
// entity, item (sequence number, "-" for an entity event), action, rule,
// reason.
func eventLine(ev core.Event) string {
	item := "-"
	if ev.Item != 0 {
		item = strconv.FormatUint(ev.Item, 10)
	}
	rule := ev.Rule
	if rule == "" {
		rule = "-"
	}
	return strings.Join([]string{
		strconv.FormatUint(ev.ID, 10), ev.Time.UTC().Format(time.RFC3339Nano), ev.Protocol, ev.Entity,
		item, string(ev.Action), rule, ev.Reason,
	}, "\t")
}

package adapters_test

// Scenario tests: the policies the adapters make of each protocol's settings,
// fed to a core.Engine driven by a frozen core.Clock that the test advances.
// They assert what a client would observe (what Receive, Take, Get and Scan
// return, item due times and rules, Info counts) and the events recorded,
// each with its SEMANTICS.md rule ID. Wire behaviour (texts, frames,
// headers) is the front-ends' to test. This file holds the fixture shared by
// scenario_servicebus_test.go, scenario_rabbitmq_test.go and
// scenario_cosmos_test.go.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// t0 is when every scenario starts.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// scenario is an engine on a frozen clock that only the test moves, with a
// MemStore so that a scenario can restart it.
type scenario struct {
	tb    testing.TB
	clock *core.Clock
	e     *core.Engine
	store *core.MemStore
	hooks map[string]core.ProtocolHooks
	// deleted names the entities the engine deleted as idle, as the
	// front-ends' Deleted hooks see them.
	deleted []string
}

// MustScenario returns an empty engine at t0 on a frozen clock.
func MustScenario(tb testing.TB) *scenario {
	tb.Helper()
	clock := core.NewClock(func() time.Time { return t0 })
	clock.Freeze()
	st := core.NewMemStore()
	e := core.NewEngine(core.Config{Store: st})
	if err := e.Recover(context.Background(), clock.Now()); err != nil {
		tb.Fatal(err)
	}
	return &scenario{tb: tb, clock: clock, e: e, store: st, hooks: map[string]core.ProtocolHooks{}}
}

// register sets a protocol's hooks, as its front-end does at start; the
// Deleted hook is the scenario's own.
func (s *scenario) register(protocol string, dl core.DeadLetterFunc) {
	h := core.ProtocolHooks{DeadLetter: dl, Deleted: func(en core.Entity) { s.deleted = append(s.deleted, en.Name) }}
	s.hooks[protocol] = h
	s.e.Register(protocol, h)
}

// restart stops the engine, moves the clock by down and starts a new engine
// on the same store with the same hooks, as a restart of lapse does.
func (s *scenario) restart(down time.Duration) {
	s.tb.Helper()
	s.tick(down)
	s.e = core.NewEngine(core.Config{Store: s.store})
	for p, h := range s.hooks {
		s.e.Register(p, h)
	}
	if err := s.e.Recover(context.Background(), s.now()); err != nil {
		s.tb.Fatal(err)
	}
}

func (s *scenario) now() time.Time { return s.clock.Now() }

// advance moves the clock by d and applies everything due (EM-1).
func (s *scenario) advance(d time.Duration) {
	s.tb.Helper()
	now, err := s.clock.Advance(d)
	if err != nil {
		s.tb.Fatal(err)
	}
	if _, err := s.e.ApplyDue(context.Background(), now); err != nil {
		s.tb.Fatal(err)
	}
}

// deletedIdle returns the entities the Deleted hook was told of so far,
// once the hooks queued so far have run.
func (s *scenario) deletedIdle() []string {
	s.tb.Helper()
	if err := s.e.WaitHooks(context.Background()); err != nil {
		s.tb.Fatal(err)
	}
	return s.deleted
}

// tick moves the clock by d without calling Advance: only the engine's own
// reads apply what fell due.
func (s *scenario) tick(d time.Duration) {
	s.tb.Helper()
	if _, err := s.clock.Advance(d); err != nil {
		s.tb.Fatal(err)
	}
}

// MustCreate creates a durable entity with policy p; set may change it first.
func (s *scenario) MustCreate(protocol, name, kind string, p core.Policy, set func(*core.Entity)) core.EntityKey {
	s.tb.Helper()
	en := core.Entity{EntityKey: core.EntityKey{Protocol: protocol, Name: name}, Kind: kind, Durable: true, Policy: p}
	if set != nil {
		set(&en)
	}
	if _, _, err := s.e.Create(s.now(), en); err != nil {
		s.tb.Fatal(err)
	}
	return en.EntityKey
}

// MustUpdatePolicy gives entity k a new policy, as a settings update does.
func (s *scenario) MustUpdatePolicy(k core.EntityKey, p core.Policy) {
	s.tb.Helper()
	if _, _, err := s.e.Update(s.now(), k, func(en *core.Entity) error { en.Policy = p; return nil }); err != nil {
		s.tb.Fatal(err)
	}
}

// MustEnqueue enqueues a persistent item and waits for its commit.
func (s *scenario) MustEnqueue(k core.EntityKey, it core.Item) core.Item {
	s.tb.Helper()
	it.Persistent = true
	out, c, err := s.e.Enqueue(s.now(), k, it)
	if err != nil {
		s.tb.Fatal(err)
	}
	if err := c.Wait(context.Background()); err != nil {
		s.tb.Fatal(err)
	}
	return out
}

// receive takes the head of k locked for lock (0: until settled).
func (s *scenario) receive(k core.EntityKey, lock time.Duration) (core.Item, bool) {
	s.tb.Helper()
	var until time.Time
	if lock > 0 {
		until = s.now().Add(lock)
	}
	it, ok, err := s.e.Receive(s.now(), k, until)
	if err != nil {
		s.tb.Fatal(err)
	}
	return it, ok
}

// MustReceive is receive that fails the test when nothing is available.
func (s *scenario) MustReceive(k core.EntityKey, lock time.Duration) core.Item {
	s.tb.Helper()
	it, ok := s.receive(k, lock)
	if !ok {
		s.tb.Fatalf("nothing to receive from %s", k)
	}
	return it
}

// drain takes (receive-and-delete) every available item of k and returns
// their bodies.
func (s *scenario) drain(k core.EntityKey) []string {
	s.tb.Helper()
	var out []string
	for {
		it, ok, _, err := s.e.Take(s.now(), k)
		if err != nil {
			s.tb.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, string(it.Body))
	}
}

// counts returns entity k's counts by state (not their byte size).
func (s *scenario) counts(k core.EntityKey) core.Counts {
	s.tb.Helper()
	in, err := s.e.Info(s.now(), k)
	if err != nil {
		s.tb.Fatal(err)
	}
	in.Counts.ActiveBytes = 0
	return in.Counts
}

// exists reports whether entity k is still there.
func (s *scenario) exists(k core.EntityKey) bool {
	_, ok := s.e.Entity(k)
	return ok
}

// since writes an instant as its offset from t0 ("10m", "14d"), "never" for
// the zero time.
func since(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return core.FormatDuration(t.Sub(t0))
}

// expiry writes an item's due time and the rule that set it: "15m SB-4",
// "never SB-3".
func expiry(it core.Item) string { return strings.TrimSpace(since(it.DueAt) + " " + it.Rule) }

// events returns the events of entity k as "action rule item due at", the
// item by its key when it has one, else its sequence number.
func (s *scenario) events(k core.EntityKey) []string {
	var out []string
	for _, ev := range s.e.Events(core.EventQuery{Protocol: k.Protocol, Entity: k.Name}) {
		id := fmt.Sprint(ev.Item)
		if ev.ItemKey != "" {
			id = ev.ItemKey
		}
		out = append(out, fmt.Sprintf("%s %s %s due %s at %s", ev.Action, ev.Rule, id, since(ev.Due), since(ev.Time)))
	}
	return out
}

// wantEvents fails the test when k's events are not want.
func (s *scenario) wantEvents(k core.EntityKey, want ...string) {
	s.tb.Helper()
	if d := cmp.Diff(want, s.events(k)); d != "" {
		s.tb.Errorf("events of %s (-want +got):\n%s", k.Name, d)
	}
}

// check fails the test when got is not want, naming what.
func check[T any](tb testing.TB, what string, want, got T) {
	tb.Helper()
	if d := cmp.Diff(want, got); d != "" {
		tb.Errorf("%s (-want +got):\n%s", what, d)
	}
}

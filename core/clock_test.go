package core_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lapse-emulator/lapse/core"
)

// wall is a settable wall clock for Clock tests.
type wall struct{ t time.Time }

func (w *wall) now() time.Time { return w.t }

func TestClockModes_EM1(t *testing.T) {
	w := &wall{t: t0}
	c := core.NewClock(w.now)
	var changes atomic.Int32
	c.OnChange(func() { changes.Add(1) })
	type step struct {
		Mode core.ClockMode
		Now  time.Duration
	}
	var got []step
	rec := func() { got = append(got, step{Mode: c.Mode(), Now: c.Now().Sub(t0)}) }

	rec()                      // real
	w.t = w.t.Add(time.Second) // wall moves, clock follows
	rec()
	c.Freeze()
	w.t = w.t.Add(time.Second) // frozen: wall moves, clock does not
	rec()
	c.Advance(time.Hour) // frozen clock advances
	rec()
	c.Resume() // runs again from where it stands
	w.t = w.t.Add(time.Second)
	rec()
	c.Set(t0.Add(48 * time.Hour))
	rec()
	want := []step{
		{core.ClockReal, 0},
		{core.ClockReal, time.Second},
		{core.ClockFrozen, time.Second},
		{core.ClockFrozen, time.Hour + time.Second},
		{core.ClockOffset, time.Hour + 2*time.Second},
		{core.ClockOffset, 48 * time.Hour},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if n := changes.Load(); n != 4 {
		t.Fatalf("OnChange called %d times, want 4", n)
	}
}

func TestClockNeverGoesBack_EM1(t *testing.T) {
	w := &wall{t: t0}
	c := core.NewClock(w.now)
	if _, err := c.Set(t0.Add(-time.Second)); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("set backwards: %v", err)
	}
	if _, err := c.Advance(-time.Second); core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("negative advance: %v", err)
	}
	c.Now()
	w.t = w.t.Add(-time.Minute) // the wall clock steps back
	if got := c.Now(); got.Before(t0) {
		t.Fatalf("clock went back to %v", got)
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"15m", 15 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"14d", 14 * 24 * time.Hour, true},
		{"P14D", 14 * 24 * time.Hour, true},
		{"PT10M", 10 * time.Minute, true},
		{"P1DT2H3M4.5S", 26*time.Hour + 3*time.Minute + 4500*time.Millisecond, true},
		{"P2W", 14 * 24 * time.Hour, true},
		{"pt1s", time.Second, true},
		{"", 0, false},
		{"-5m", 0, false},
		{"P1M", 0, false}, // months have no fixed length
		{"PT", 0, false},
		{"P", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := core.ParseDuration(c.in)
			if (err == nil) != c.ok || got != c.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
			}
			if err != nil && core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("error code %q", core.ErrorCode(err))
			}
		})
	}
}

func TestTTL(t *testing.T) {
	if core.NoTTL.IsSet() || !core.After(0).IsSet() || !core.Forever.IsForever() || core.Forever.Finite() {
		t.Fatal("TTL predicates")
	}
	if !core.After(time.Second).Less(core.NoTTL) || core.NoTTL.Less(core.After(time.Hour)) || !core.After(time.Second).Less(core.Forever) {
		t.Fatal("TTL.Less")
	}
	if !core.Forever.DueFrom(t0).IsZero() || !core.NoTTL.DueFrom(t0).IsZero() || !core.After(time.Second).DueFrom(t0).Equal(t0.Add(time.Second)) {
		t.Fatal("TTL.DueFrom")
	}
	for _, ttl := range []core.TTL{core.NoTTL, core.Forever, core.After(0), core.After(1500 * time.Millisecond)} {
		b, err := ttl.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back core.TTL
		if err := back.UnmarshalJSON(b); err != nil || back != ttl {
			t.Fatalf("%v round-tripped to %v (%s, %v)", ttl, back, b, err)
		}
	}
	names := map[core.TTL]string{core.NoTTL: "none", core.Forever: "forever", core.After(14 * 24 * time.Hour): "14d", core.After(1500 * time.Millisecond): "1500ms"}
	for ttl, want := range names {
		if ttl.String() != want {
			t.Fatalf("%v.String() = %q, want %q", ttl.Duration(), ttl.String(), want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                 "0s",
		14 * 24 * time.Hour:               "14d",
		26 * time.Hour:                    "1d2h",
		55*time.Minute + 55*time.Second:   "55m55s",
		1500 * time.Millisecond:           "1500ms",
		time.Hour + 1500*time.Millisecond: "1h1s500ms",
		time.Microsecond:                  "1µs",
		10*time.Minute + 30*time.Second:   "10m30s",
	} {
		if got := core.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestClockOnChangeCanBeCancelled(t *testing.T) {
	c := core.NewClock(func() time.Time { return t0 })
	n := 0
	cancel := c.OnChange(func() { n++ })
	c.Freeze()
	cancel()
	c.Advance(time.Second)
	if n != 1 {
		t.Fatalf("called %d times, want 1", n)
	}
}

// The clock hands out wall instants only: a time it returns carries no
// monotonic reading, so that durations between the engine's times are
// measured on the wall clock its timers follow (EM-4).
func TestClockTimesCarryNoMonotonicReading(t *testing.T) {
	c := core.NewClock(time.Now)
	now := c.Now()
	if now != now.Round(0) {
		t.Fatalf("Now() = %v carries a monotonic reading", now)
	}
}

// NewClockAt starts a clock at an instant of the past or the future,
// frozen there or running from there.
func TestNewClockAt(t *testing.T) {
	wall := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return wall }
	past := wall.Add(-48 * time.Hour)
	c := core.NewClockAt(now, past, true)
	if got := c.Now(); !got.Equal(past) || c.Mode() != core.ClockFrozen {
		t.Fatalf("frozen at the past: %v %v", got, c.Mode())
	}
	r := core.NewClockAt(now, past, false)
	wall = wall.Add(time.Minute)
	if got := r.Now(); !got.Equal(past.Add(time.Minute)) {
		t.Fatalf("running from the past: %v", got)
	}
}

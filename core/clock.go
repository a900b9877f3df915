package core

import (
	"sync"
	"time"
)

// ClockMode is how the Clock runs.
type ClockMode string

// The clock modes (docs/control-api.md).
const (
	ClockReal   ClockMode = "real"   // wall time
	ClockFrozen ClockMode = "frozen" // stands still until advanced or resumed
	ClockOffset ClockMode = "offset" // runs at wall speed, ahead of wall time
)

// Clock is lapse's one source of time (EM-1). It reads the wall time from the
// function it is given, so core itself never calls time.Now. Safe for
// concurrent use.
type Clock struct {
	wall func() time.Time

	mu       sync.Mutex
	offset   time.Duration // added to wall time while running
	frozen   bool
	frozenAt time.Time
	last     time.Time // the latest instant handed out, so time never goes back
	changed  map[int]func()
	nextID   int
}

// NewClock returns a running Clock that follows wall.
func NewClock(wall func() time.Time) *Clock {
	return &Clock{wall: wall}
}

// NewClockAt returns a Clock that follows wall from instant at: frozen
// there, or running from there at wall speed. at may be in the past, as a
// world's clock is when it comes back after a restart.
func NewClockAt(wall func() time.Time, at time.Time, frozen bool) *Clock {
	c := &Clock{wall: wall, last: at.Round(0)}
	if frozen {
		c.frozen, c.frozenAt = true, at.Round(0)
	} else {
		c.offset = at.Sub(wall())
	}
	return c
}

// Now returns the current time of the clock, never earlier than any time it
// returned before.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	var t time.Time
	if c.frozen {
		t = c.frozenAt
	} else {
		// Without the monotonic reading time.Now carries: the engine's
		// times are wall instants (its timers compare UnixNano), and a
		// duration between two times that both carried one would be
		// measured on the monotonic clock instead, which drifts from the
		// wall clock while NTP slews it, so that an expiry applied at its
		// wall due time could look early by microseconds (EM-4).
		t = c.wall().Add(c.offset).Round(0)
	}
	if t.Before(c.last) {
		t = c.last
	}
	c.last = t
	return t
}

// Mode returns how the clock runs.
func (c *Clock) Mode() ClockMode {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.frozen:
		return ClockFrozen
	case c.offset != 0:
		return ClockOffset
	}
	return ClockReal
}

// OnChange registers fn to be called (outside the clock's lock) after every
// Freeze, Resume, Advance and Set, and returns a function that unregisters
// it. The expiry scheduler uses it to wake up.
func (c *Clock) OnChange(fn func()) (cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(map[int]func())
	}
	id := c.nextID
	c.nextID++
	c.changed[id] = fn
	return func() {
		c.mu.Lock()
		delete(c.changed, id)
		c.mu.Unlock()
	}
}

func (c *Clock) notify() {
	c.mu.Lock()
	fns := make([]func(), 0, len(c.changed))
	for _, fn := range c.changed {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Freeze stops the clock at the current time.
func (c *Clock) Freeze() time.Time {
	c.mu.Lock()
	now := c.nowLocked()
	c.frozen, c.frozenAt = true, now
	c.mu.Unlock()
	c.notify()
	return now
}

// Resume lets a frozen clock run again from where it stands.
func (c *Clock) Resume() time.Time {
	c.mu.Lock()
	now := c.nowLocked()
	if c.frozen {
		c.frozen = false
		c.offset = now.Sub(c.wall())
	}
	c.mu.Unlock()
	c.notify()
	return now
}

// Advance moves the clock forward by d, which must not be negative, and
// returns the new time.
func (c *Clock) Advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, Errorf(EINVALID, "cannot advance the clock by a negative duration %s", d)
	}
	c.mu.Lock()
	now := c.nowLocked().Add(d)
	c.setLocked(now)
	c.mu.Unlock()
	c.notify()
	return now, nil
}

// Set moves the clock to t, which must not be before the current time.
func (c *Clock) Set(t time.Time) (time.Time, error) {
	c.mu.Lock()
	now := c.nowLocked()
	if t.Before(now) {
		c.mu.Unlock()
		return time.Time{}, Errorf(EINVALID, "cannot set the clock back from %s to %s", now.Format(time.RFC3339Nano), t.Format(time.RFC3339Nano))
	}
	c.setLocked(t)
	c.mu.Unlock()
	c.notify()
	return t, nil
}

func (c *Clock) setLocked(t time.Time) {
	if c.frozen {
		c.frozenAt = t
	} else {
		c.offset = t.Sub(c.wall())
	}
	c.last = t
}

package servicebus_test

import (
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/internal/testdeadline"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Issue 25.0: an administration call holds adminMu across its engine
// calls, which may apply another entity's idle deletion that fell due
// meanwhile (SB-10); the Deleted hook that forgets that entity takes
// adminMu too, and must not run on the goroutine that holds it. Each case
// moves the clock past the idle deadline of queue "idle", topic "tidle"
// and subscription "t/sidle" without applying anything.

// rule: SB-10
func TestAdministrationThatAppliesAnIdleDeletionDoesNotWaitForItself_SB10(t *testing.T) {
	idle := func(p *atom.QueueProperties) { p.AutoDeleteOnIdle = 5 * time.Minute }
	for name, change := range map[string]func(*fixture) error{
		"create another queue": func(f *fixture) error { return f.s.CreateQueue("other", atom.DefaultQueue()) },
		"create the same queue anew": func(f *fixture) error {
			p := atom.DefaultQueue()
			idle(&p)
			return f.s.CreateQueue("idle", p)
		},
		"create the same topic anew": func(f *fixture) error { return f.s.CreateTopic("tidle", atom.DefaultTopic()) },
		"create the same subscription anew": func(f *fixture) error {
			return f.s.CreateSubscription("t", "sidle", atom.DefaultSubscription())
		},
		"update a queue": func(f *fixture) error { return f.s.UpdateQueue("keep", atom.DefaultQueue()) },
	} {
		t.Run(name, func(t *testing.T) {
			f := MustServer(t)
			f.MustQueue("idle", idle)
			f.MustQueue("keep", nil)
			f.MustTopic("tidle", func(p *atom.TopicProperties) { p.AutoDeleteOnIdle = 5 * time.Minute })
			f.MustTopic("t", nil)
			f.MustSubscription("t", "sidle", func(p *atom.SubscriptionProperties) { p.AutoDeleteOnIdle = 5 * time.Minute })
			if _, err := f.clock.Advance(6 * time.Minute); err != nil {
				t.Fatal(err)
			}
			testdeadline.Within(t, 10*time.Second, name, func() {
				if err := change(f); err != nil {
					t.Error(err)
				}
			})
			testdeadline.Within(t, 10*time.Second, "a later create", func() {
				f.MustQueue("later", nil)
			})
		})
	}
}

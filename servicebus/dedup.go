package servicebus

import (
	"time"

	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// dedup is the duplicate detection of a queue or topic with
// RequiresDuplicateDetection: the message ids it took within the history
// time window. A message whose id was seen within the window is accepted
// and dropped, as the service does. The history lives in memory only.
type dedup struct {
	mu   lockorder.Mutex
	seen map[string]time.Time // message id -> when it was first taken
}

// duplicate reports whether id was taken within window before now, and
// records it when it was not.
func (d *dedup) duplicate(id string, now time.Time, window time.Duration) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[string]time.Time{}
	}
	if at, ok := d.seen[id]; ok && now.Sub(at) < window {
		return true
	}
	if len(d.seen) >= 1024 && len(d.seen)%1024 == 0 {
		for k, at := range d.seen {
			if now.Sub(at) >= window {
				delete(d.seen, k)
			}
		}
	}
	d.seen[id] = now
	return false
}

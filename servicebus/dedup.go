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
	mu    lockorder.Mutex
	taken map[string]time.Time // message id -> when it was first taken
}

// seen reports whether id was taken within window before now.
func (d *dedup) seen(id string, now time.Time, window time.Duration) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.taken[id]
	return ok && now.Sub(at) < window
}

// record notes that id was taken at now, once its message is stored: a
// message refused is not a duplicate of its retry (issue 25.2).
func (d *dedup) record(id string, now time.Time, window time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.taken == nil {
		d.taken = map[string]time.Time{}
	}
	if at, ok := d.taken[id]; ok && now.Sub(at) < window {
		return // taken meanwhile: the window counts from the first
	}
	if len(d.taken) >= 1024 && len(d.taken)%1024 == 0 {
		for k, at := range d.taken {
			if now.Sub(at) >= window {
				delete(d.taken, k)
			}
		}
	}
	d.taken[id] = now
}

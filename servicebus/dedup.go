package servicebus

import (
	"time"

	"github.com/lapse-emulator/lapse/internal/lockorder"
)

// dedup is the duplicate detection of a queue or topic with
// RequiresDuplicateDetection: the message ids it took within the history
// time window. A message whose id was seen within the window is accepted
// and dropped, as the service does. The history lives in memory only.
//
// An id is claimed while its message is being stored, and taken once it
// is (issue 25.2): a message refused is not a duplicate of its retry,
// and of two sends of one id at the same moment only the first is
// stored, the other being a duplicate of it, as the service keeps one.
type dedup struct {
	mu      lockorder.Mutex
	taken   map[string]time.Time // message id -> when it was first taken
	claimed map[string]int       // message id -> sends storing it now
}

// claim reports whether id is a duplicate: taken within window before
// now, or claimed by a send that is storing it. If not, it claims id for
// the caller, who must then take or release it.
func (d *dedup) claim(id string, now time.Time, window time.Duration) (duplicate bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at, ok := d.taken[id]; ok && now.Sub(at) < window {
		return true
	}
	if d.claimed[id] > 0 {
		return true
	}
	if d.claimed == nil {
		d.claimed = map[string]int{}
	}
	d.claimed[id]++
	return false
}

// release gives up a claim of id whose message was not stored.
func (d *dedup) release(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unclaim(id)
}

func (d *dedup) unclaim(id string) {
	if d.claimed[id]--; d.claimed[id] <= 0 {
		delete(d.claimed, id)
	}
}

// take notes that id, claimed, was taken at now: its message is stored.
func (d *dedup) take(id string, now time.Time, window time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unclaim(id)
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

package dashboard

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// The stream's pace: how often it looks for changes in the entities, and
// how often it sends the clock when nothing else happens (pages keep their
// clock in step with it) and a comment to keep proxies from closing it.
const (
	streamPoll  = 250 * time.Millisecond
	streamClock = 5 * time.Second
	// streamBatch bounds the events of one "events" message.
	streamBatch = 1000
)

// stream answers GET /api/stream with server-sent events, which the pages
// follow to update without reloads:
//
//   - "clock": the ClockState, at once, whenever the clock is moved, frozen
//     or resumed, and every few seconds;
//   - "events": the core.Events recorded since the last such message (EM-2),
//     a JSON array: one event, or a batch of those waiting when a burst of
//     expiries comes;
//   - "changed": something in the entities or their items changed (the
//     data is a hash of their state); pages reload their live regions;
//   - "resync": events were lost (the client was too slow); reload all.
func (s *Server) stream(c *gin.Context) {
	w := c.Writer
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.writeError(c, core.Errorf(core.EINTERNAL, "the response cannot stream"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	sub := s.cfg.Engine.Subscribe(1024)
	defer s.cfg.Engine.Unsubscribe(sub)
	moved := make(chan struct{}, 1)
	cancel := s.cfg.Clock.OnChange(func() {
		select {
		case moved <- struct{}{}:
		default:
		}
	})
	defer cancel()

	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	sendClock := func() bool { return send("clock", s.clockState(s.cfg.Clock.Now())) }

	poll := time.NewTicker(streamPoll)
	defer poll.Stop()
	clock := time.NewTicker(streamClock)
	defer clock.Stop()
	var batch []core.Event
	last := s.stateHash()
	dropped := sub.Dropped()
	if !sendClock() || !send("changed", last) {
		return
	}
	ctx := c.Request.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			// A burst of expiries is sent in a few messages, not one each:
			// take what else is already waiting.
			batch = append(batch[:0], ev)
		drain:
			for len(batch) < streamBatch {
				select {
				case ev, ok := <-sub.C:
					if !ok {
						return
					}
					batch = append(batch, ev)
				default:
					break drain
				}
			}
			if !send("events", batch) {
				return
			}
		case <-moved:
			if !sendClock() {
				return
			}
		case <-clock.C:
			if !sendClock() {
				return
			}
		case <-poll.C:
			if d := sub.Dropped(); d != dropped {
				dropped = d
				if !send("resync", d) {
					return
				}
			}
			if hsh := s.stateHash(); hsh != last {
				last = hsh
				if !send("changed", hsh) {
					return
				}
			}
		}
	}
}

// stateHash sums up every entity's figures: it changes whenever an item is
// added, taken, settled, expired or rewritten (each takes a new sequence
// number or moves a count), or an entity comes or goes.
func (s *Server) stateHash() string {
	h := fnv.New64a()
	for _, in := range s.cfg.Engine.Entities(s.cfg.Clock.Now(), "") {
		fmt.Fprintf(h, "%s|%s|%d|%+v|%d|%d|%d|%d\x00", in.Protocol, in.Name, in.LastSeq, in.Counts,
			in.Consumers, in.NextDue.UnixNano(), in.IdleDeadline.UnixNano(), in.LastUsed.UnixNano())
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

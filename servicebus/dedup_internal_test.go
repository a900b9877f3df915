package servicebus

import (
	"testing"

	"github.com/lapse-emulator/lapse/servicebus/amqp"
	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Issue 25.2: duplicate detection takes a message id once its message is
// stored, and claims it meanwhile, so that of two sends of one id at the
// same moment only one is stored (the service keeps one). (That a refused
// send gives its ids back for the retry is TestBatchIsStoredWholeOrNotAtAll's.)
// The two plans below stand for two sends whose engine calls have not run
// yet.
func TestDuplicateDetectionClaimsAnIdWhileItsMessageIsStored(t *testing.T) {
	s, _, clock := mustBareServer(t)
	p := atom.DefaultQueue()
	p.RequiresDuplicateDetection = true
	if _, err := s.createQueue("q", p); err != nil {
		t.Fatal(err)
	}
	msg := func(id string) *inMsg {
		raw, err := (&amqp.Message{Properties: &amqp.Properties{MessageID: id}, Data: [][]byte{[]byte(id)}}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		in, err := s.readMessage(raw)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	now := clock.Now()
	first, second := plan{}, plan{}
	if err := s.route(now, "q", msg("a"), 0, &first, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := s.route(now, "q", msg("a"), 0, &second, 0, false); err != nil {
		t.Fatal(err)
	}
	if len(first.targets) != 1 || len(second.targets) != 0 {
		t.Fatalf("the first send plans %d copies and the second, at the same moment, %d: want 1 and 0",
			len(first.targets), len(second.targets))
	}
	// Had the first been refused, its claim would be given up, and a send
	// of the id then stores it and takes the id.
	for _, x := range first.ids {
		x.d.release(x.id)
	}
	if _, _, err := s.send(now, "q", msg("a")); err != nil {
		t.Fatal(err)
	}
	qe := s.queue("q")
	qe.dups.mu.Lock()
	defer qe.dups.mu.Unlock()
	if n := len(qe.dups.claimed); n != 0 {
		t.Errorf("%d ids still claimed, want none", n)
	}
	if _, ok := qe.dups.taken["a"]; !ok {
		t.Error("id a is not taken once its message is stored")
	}
}

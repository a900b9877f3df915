package servicebus

import (
	"time"

	"github.com/lapse-emulator/lapse/servicebus/atom"
)

// Entity creation for the tests of package servicebus_test, which do not
// always need the administration API.

func (s *Server) CreateQueue(name string, p atom.QueueProperties) error {
	_, err := s.createQueue(name, p)
	return err
}

func (s *Server) CreateTopic(name string, p atom.TopicProperties) error {
	_, err := s.createTopic(name, p)
	return err
}

func (s *Server) CreateSubscription(topic, name string, p atom.SubscriptionProperties) error {
	_, err := s.createSubscription(topic, name, p)
	return err
}

func (s *Server) AddRule(topic, sub string, p atom.RuleProperties) error {
	_, err := s.addRule(topic, sub, p)
	return err
}

func (s *Server) UpdateQueue(name string, p atom.QueueProperties) error {
	_, err := s.updateQueue(name, p)
	return err
}

func (s *Server) RemoveRule(topic, sub, name string) error { return s.removeRule(topic, sub, name) }

// ScheduledOnTopics is how many messages scheduled on topics the server
// keeps the copies of, for cancel-scheduled-message.
func (s *Server) ScheduledOnTopics() int {
	s.schedMu.Lock()
	defer s.schedMu.Unlock()
	return len(s.scheduled)
}

// Worlds is how many other worlds' APIs the administration API keeps.
func (a *Admin) Worlds() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.worlds)
}

// WaitingForSession is how many receivers of the entity at path wait for
// a next session: registered with the entity, none accepted yet.
func (s *Server) WaitingForSession(path string) int {
	ad, ok := parseAddress(path)
	if !ok {
		return 0
	}
	n := s.resolve(ad)
	if n == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	waiting := 0
	for l := range n.waiters {
		if l.sess == nil {
			continue
		}
		l.mu.Lock()
		if l.sess.next && !l.sess.accepted {
			waiting++
		}
		l.mu.Unlock()
	}
	return waiting
}

// SetDetachWait sets how long the server's detaches wait for their
// clients, until the test ends.
func SetDetachWait(tb interface{ Cleanup(func()) }, d time.Duration) {
	old := detachWait
	detachWait = d
	tb.Cleanup(func() { detachWait = old })
}

package main

import (
	"fmt"
	"sync"
	"time"

	amqp1 "github.com/Azure/go-amqp"
)

// kickNote says how often the credit was given again, if it was.
func (r benchConsumed) kickNote() string {
	if r.kicks == 0 {
		return ""
	}
	return fmt.Sprintf(" (credit given again %d times after %s without a message)", r.kicks, benchKick)
}

// benchKick is how long a receiver waits for a message before it gives
// its credit again.
const benchKick = 250 * time.Millisecond

// benchCreditor gives a receiver's credit as go-amqp's automatic credit
// does, and gets it unstuck on RabbitMQ before 4.0. Once half of the
// credit is settled, that half is given again. RabbitMQ at times delivers
// beyond the credit (rabbitmq-server#2597); go-amqp's count of the credit
// left then wraps around below zero, and its automatic credit never gives
// more. IssueCredit adds to that count, so the messages received beyond
// what was given are given on top; and when no message comes for
// benchKick, the whole credit is given again (counted in kicks).
type benchCreditor struct {
	rcv *amqp1.Receiver

	mu           sync.Mutex
	given, got   uint64 // credit given and messages received, in all
	settledSince int    // messages settled since credit was last given
	kicks        int
}

// give gives k more credit, plus what was received beyond the credit;
// c.mu is held, or the receiver not yet shared.
func (c *benchCreditor) give(k int) error {
	extra := uint64(0)
	if c.got > c.given {
		extra = c.got - c.given
	}
	if err := c.rcv.IssueCredit(uint32(uint64(k) + extra)); err != nil {
		return fmt.Errorf("giving credit: %w", err)
	}
	c.given += uint64(k) + extra
	return nil
}

// received counts a message received.
func (c *benchCreditor) received() {
	c.mu.Lock()
	c.got++
	c.mu.Unlock()
}

// settled counts a message settled, and gives credit for every half of it.
func (c *benchCreditor) settled() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settledSince++; c.settledSince < benchCredit/2 {
		return nil
	}
	k := c.settledSince
	c.settledSince = 0
	return c.give(k)
}

// kick gives the whole credit again.
func (c *benchCreditor) kick() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kicks++
	return c.give(benchCredit)
}

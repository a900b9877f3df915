package main

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// serviceBus sends to and peeks at the Service Bus queue "orders".
type serviceBus struct {
	client *azservicebus.Client
}

func newServiceBus(connectionString string) (*serviceBus, error) {
	client, err := azservicebus.NewClientFromConnectionString(connectionString, nil)
	if err != nil {
		return nil, fmt.Errorf("service bus: %w", err)
	}
	return &serviceBus{client: client}, nil
}

func (s *serviceBus) close() { _ = s.client.Close(context.Background()) }

// send sends one message with the message ID id and no time-to-live of its
// own: the queue's default applies.
func (s *serviceBus) send(ctx context.Context, id string) error {
	sender, err := s.client.NewSender("orders", nil)
	if err != nil {
		return fmt.Errorf("service bus: %w", err)
	}
	defer sender.Close(ctx)
	if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: &id, Body: []byte(`{"order":"` + id + `"}`)}, nil); err != nil {
		return fmt.Errorf("service bus: send: %w", err)
	}
	return nil
}

// deadLetter looks for the message id in the queue's dead-letter queue and
// returns its dead-letter reason. It peeks, so the message stays there for
// the dashboard to show.
func (s *serviceBus) deadLetter(ctx context.Context, id string) (string, error) {
	receiver, err := s.client.NewReceiverForQueue("orders", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		return "", fmt.Errorf("service bus: %w", err)
	}
	defer receiver.Close(ctx)
	for {
		// Each peek goes on after the last message the previous one saw.
		msgs, err := receiver.PeekMessages(ctx, 100, nil)
		if err != nil {
			return "", fmt.Errorf("service bus: peek the dead-letter queue: %w", err)
		}
		if len(msgs) == 0 {
			return "", fmt.Errorf("service bus: message %s is not in orders/$deadletterqueue", id)
		}
		for _, m := range msgs {
			if m.MessageID == id {
				if m.DeadLetterReason == nil {
					return "", fmt.Errorf("service bus: message %s has no dead-letter reason", id)
				}
				return *m.DeadLetterReason, nil
			}
		}
	}
}

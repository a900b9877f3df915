"""lapse's own program of the flow of Microsoft's Python quickstart for
Service Bus queues, with azure-servicebus 7: through
$SERVICEBUS_CONNECTION_STRING it sends one message, a list of five and a
batch of ten to the queue its argument names, then receives the sixteen,
completing each.

    python3 sbqueue.py QUEUE

server/quickstart_test.go runs it; docs/examples.md names the quickstart.
"""

import os
import sys

from azure.servicebus import ServiceBusClient, ServiceBusMessage


def send(sender):
    sender.send_messages(ServiceBusMessage("single"))
    print("sent one message", flush=True)
    sender.send_messages([ServiceBusMessage(f"list {i}") for i in range(1, 6)])
    print("sent a list of 5 messages", flush=True)
    batch = sender.create_message_batch()
    for i in range(1, 11):
        batch.add_message(ServiceBusMessage(f"batch {i}"))  # ValueError once the batch is full
    sender.send_messages(batch)
    print("sent a batch of 10 messages", flush=True)
    return 16


def receive(receiver, count):
    # Iterating a receiver waits for messages until there are count.
    for msg in receiver:
        print(f"received: {msg}", flush=True)
        receiver.complete_message(msg)
        count -= 1
        if count == 0:
            return


def main(queue):
    with ServiceBusClient.from_connection_string(os.environ["SERVICEBUS_CONNECTION_STRING"]) as client:
        with client.get_queue_sender(queue_name=queue) as sender:
            sent = send(sender)
        with client.get_queue_receiver(queue_name=queue) as receiver:
            receive(receiver, sent)


if __name__ == "__main__":
    main(sys.argv[1])

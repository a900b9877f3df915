"""lapse's own program of the flow of Microsoft's Python quickstart for
Service Bus topics and subscriptions, with azure-servicebus 7's asyncio
clients: through $SERVICEBUS_CONNECTION_STRING it sends one message, a list
of five and a batch of ten to the topic its first argument names, then
receives the sixteen from the subscription its second argument names,
completing each.

    python3 sbtopic.py TOPIC SUBSCRIPTION

server/quickstart_test.go runs it; docs/examples.md names the quickstart.
"""

import asyncio
import os
import sys

from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient


async def send(sender):
    await sender.send_messages(ServiceBusMessage("single"))
    print("sent one message", flush=True)
    await sender.send_messages([ServiceBusMessage(f"list {i}") for i in range(1, 6)])
    print("sent a list of 5 messages", flush=True)
    batch = await sender.create_message_batch()
    for i in range(1, 11):
        batch.add_message(ServiceBusMessage(f"batch {i}"))  # ValueError once the batch is full
    await sender.send_messages(batch)
    print("sent a batch of 10 messages", flush=True)
    return 16


async def receive(receiver, count):
    # The receiver hands over messages as they come, count of them here.
    async for msg in receiver:
        print(f"received: {msg}", flush=True)
        await receiver.complete_message(msg)
        count -= 1
        if count == 0:
            return


async def main(topic, subscription):
    async with ServiceBusClient.from_connection_string(os.environ["SERVICEBUS_CONNECTION_STRING"]) as client:
        async with client.get_topic_sender(topic_name=topic) as sender:
            sent = await send(sender)
        async with client.get_subscription_receiver(topic_name=topic, subscription_name=subscription) as receiver:
            await receive(receiver, sent)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))

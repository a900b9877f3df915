"""azure-servicebus's WebSocket transport (TransportType.AmqpOverWebsocket)
against lapse, sync and asyncio.

    python over_websockets.py QUEUE

Environment: SERVICEBUS_CONNECTION_STRING (the service's, without
UseDevelopmentEmulator, with lapse's AMQPS or WebSocket port: the
administration client sends its https:// requests there), SERVICEBUS_ENDPOINT
(sb://localhost:PORT, the same port: the SDK's custom_endpoint_address, since
over WebSockets it otherwise dials port 443 of the endpoint's host), LAPSE_CERT
(lapse's certificate). Prints one JSON line that websocket_test.go checks.
"""

import asyncio
import json
import os
import sys

from azure.servicebus import ServiceBusClient, ServiceBusMessage, TransportType
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.management import ServiceBusAdministrationClient

CONN = os.environ["SERVICEBUS_CONNECTION_STRING"]
ENDPOINT = os.environ["SERVICEBUS_ENDPOINT"]
CERT = os.environ["LAPSE_CERT"]

OPTIONS = dict(
    transport_type=TransportType.AmqpOverWebsocket,
    custom_endpoint_address=ENDPOINT,
    connection_verify=CERT,
    retry_total=0,
)


def body(msg):
    return b"".join(msg.body).decode()


def sync_round(queue):
    with ServiceBusClient.from_connection_string(CONN, **OPTIONS) as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("sync over a WebSocket"))
        with sb.get_queue_receiver(queue) as receiver:
            msgs = receiver.receive_messages(max_message_count=1, max_wait_time=5)
            for m in msgs:
                receiver.complete_message(m)
            return [body(m) for m in msgs]


async def async_round(queue):
    async with AsyncServiceBusClient.from_connection_string(CONN, **OPTIONS) as sb:
        async with sb.get_queue_sender(queue) as sender:
            await sender.send_messages(ServiceBusMessage("asyncio over a WebSocket"))
        async with sb.get_queue_receiver(queue) as receiver:
            msgs = await receiver.receive_messages(max_message_count=1, max_wait_time=5)
            for m in msgs:
                await receiver.complete_message(m)
            return [body(m) for m in msgs]


def main():
    queue = sys.argv[1]
    with ServiceBusAdministrationClient.from_connection_string(CONN, connection_verify=CERT) as adm:
        adm.create_queue(queue)
        sync_bodies = sync_round(queue)
        async_bodies = asyncio.run(async_round(queue))
        left = adm.get_queue_runtime_properties(queue).active_message_count
    print(json.dumps({"sync": sync_bodies, "asyncio": async_bodies, "left": left}))


if __name__ == "__main__":
    main()

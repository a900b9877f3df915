"""The Service Bus example of lapse's README, with azure-servicebus for
Python: it sends a message to the queue "orders" (declared by
examples/config/Config.json: a 1-hour TTL, dead-lettered on expiry), moves
lapse's clock 61 minutes and receives the message from the queue's
dead-letter queue.

    python3 examples/servicebus/python/main.py

azure-servicebus before 7.9 (Debian's is 7.8.2) has no emulator support: it
dials AMQPS on port 5671 and checks the server's certificate, so the
connection string has no UseDevelopmentEmulator and no port, and the program
trusts lapse's certificate, which it downloads from the control API.
"""

import json
import os
import tempfile
import urllib.request

from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSubQueue

CONN = os.environ.get(
    "SERVICEBUS_CONNECTION_STRING",
    "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;",
)
CONTROL = os.environ.get("LAPSE_CONTROL_URL", "http://localhost:8080")

with urllib.request.urlopen(CONTROL + "/cert.pem") as resp, tempfile.NamedTemporaryFile(suffix=".pem", delete=False) as cert:
    cert.write(resp.read())

with ServiceBusClient.from_connection_string(CONN, connection_verify=cert.name) as client:
    with client.get_queue_sender("orders") as sender:
        sender.send_messages(ServiceBusMessage("order 1"))
    print("sent: order 1")

    # The control API moves lapse's clock; it answers once every expiry due
    # by then is applied.
    req = urllib.request.Request(CONTROL + "/api/clock/advance", data=json.dumps({"by": "61m"}).encode(), method="POST")
    urllib.request.urlopen(req).close()
    print("clock advanced 61m")

    with client.get_queue_receiver("orders", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=10) as dlq:
        (msg,) = dlq.receive_messages(max_message_count=1)
        print(f"dead-lettered: {msg} ({msg.dead_letter_reason})")
        dlq.complete_message(msg)
os.remove(cert.name)

"""The RabbitMQ example of lapse's README, with pika: it publishes a message
to the queue "orders" (declared by examples/config/definitions.json:
x-message-ttl 1 hour, dead-lettered to "orders.expired"), moves lapse's
clock 61 minutes and gets the message from "orders.expired" with its x-death
header.

    python3 examples/rabbitmq/python/main.py
"""

import json
import os
import urllib.request

import pika

URL = os.environ.get("RABBITMQ_URL", "amqp://guest:guest@localhost:5672/")
CONTROL = os.environ.get("LAPSE_CONTROL_URL", "http://localhost:8080")


def text(v):
    return v.decode() if isinstance(v, bytes) else v


conn = pika.BlockingConnection(pika.URLParameters(URL))
ch = conn.channel()
# A confirmed publish is in the queue before the clock moves.
ch.confirm_delivery()
ch.basic_publish("", "orders", b"order 1")
print("published: order 1")

# The control API moves lapse's clock; it answers once every expiry due by
# then is applied.
req = urllib.request.Request(CONTROL + "/api/clock/advance", data=json.dumps({"by": "61m"}).encode(), method="POST")
urllib.request.urlopen(req).close()
print("clock advanced 61m")

method, props, body = ch.basic_get("orders.expired", auto_ack=True)
death = props.headers["x-death"][0]
print(f"dead-lettered: {body.decode()} (x-death: {text(death['reason'])} from {text(death['queue'])})")
conn.close()

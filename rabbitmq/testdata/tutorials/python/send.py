#!/usr/bin/env python
# RabbitMQ tutorial 1, "Hello World!" (Python, pika): send.py as the tutorial gives it
# (rabbitmq-tutorials python/send.py at commit 8aec600, Apache License 2.0; see README.md).
# Only this comment is added; the test replaces the broker's address.

import pika

connection = pika.BlockingConnection(
    pika.ConnectionParameters(host="localhost"),
)
channel = connection.channel()

channel.queue_declare(queue="hello", durable=True, arguments={"x-queue-type": "quorum"})

channel.basic_publish(exchange="", routing_key="hello", body="Hello World!")
print(" [x] Sent 'Hello World!'")

connection.close()

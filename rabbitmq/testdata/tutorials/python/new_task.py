#!/usr/bin/env python
# RabbitMQ tutorial 2, "Work Queues" (Python, pika): new_task.py as the tutorial gives it
# (rabbitmq-tutorials python/new_task.py at commit 8aec600, Apache License 2.0; see README.md).
# Only this comment is added; the test replaces the broker's address.

import sys

import pika

connection = pika.BlockingConnection(
    pika.ConnectionParameters(host="localhost"),
)
channel = connection.channel()

channel.queue_declare(queue="task_queue", durable=True, arguments={"x-queue-type": "quorum"})

message = " ".join(sys.argv[1:]) or "Hello World!"
channel.basic_publish(
    exchange="",
    routing_key="task_queue",
    body=message,
    properties=pika.BasicProperties(
        delivery_mode=pika.DeliveryMode.Persistent,
    ),
)
print(f" [x] Sent {message}")

connection.close()

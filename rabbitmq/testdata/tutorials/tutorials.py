"""lapse's own program of the flows of RabbitMQ's tutorials 1 ("Hello
World!") and 2 ("Work Queues"), with pika. It connects to $RABBITMQ_URL
and does one of:

    send          publish "hello, lapse" to the quorum queue greetings
    receive       print what arrives on greetings (auto-ack) until SIGINT
    add WORD...   publish the words, persistent, to the quorum queue jobs
    work          take jobs one at a time (prefetch 1), acking each, until SIGINT

rabbitmq/tutorials_test.go runs it; docs/examples.md names the tutorials.
"""

import os
import sys

import pika

# Both queues are durable quorum queues, as the tutorials declare them.
QUORUM = {"x-queue-type": "quorum"}
PERSISTENT = 2  # delivery mode; pika.DeliveryMode arrived only in pika 1.3


def publish(channel, queue, body, mode):
    channel.queue_declare(queue=queue, durable=True, arguments=QUORUM)
    channel.basic_publish(exchange="", routing_key=queue, body=body,
                          properties=pika.BasicProperties(content_type="text/plain", delivery_mode=mode))


def consume(channel, queue, auto_ack, handle):
    channel.queue_declare(queue=queue, durable=True, arguments=QUORUM)
    channel.basic_consume(queue=queue, on_message_callback=handle, auto_ack=auto_ack)
    print(f"waiting on {queue}", flush=True)
    try:
        channel.start_consuming()
    except KeyboardInterrupt:
        pass


def main(command, args):
    conn = pika.BlockingConnection(pika.URLParameters(os.environ["RABBITMQ_URL"]))
    channel = conn.channel()
    if command == "send":
        publish(channel, "greetings", "hello, lapse", 1)
        print("sent: hello, lapse")
    elif command == "receive":
        consume(channel, "greetings", True,
                lambda ch, method, props, body: print(f"got: {body.decode()}", flush=True))
    elif command == "add":
        job = " ".join(args)
        publish(channel, "jobs", job, PERSISTENT)
        print(f"added: {job}")
    elif command == "work":
        def work(ch, method, props, body):
            print(f"took: {body.decode()}", flush=True)
            ch.basic_ack(delivery_tag=method.delivery_tag)
            print(f"acked: {body.decode()}", flush=True)

        channel.basic_qos(prefetch_count=1)
        consume(channel, "jobs", False, work)
    else:
        sys.exit(f"unknown command {command!r}: want send, receive, add WORD... or work")
    conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

"""lapse's own program of the flows of RabbitMQ's tutorials 1 ("Hello
World!"), 2 ("Work Queues"), 3 ("Publish/Subscribe"), 4 ("Routing") and 5
("Topics"), with pika. It connects to $RABBITMQ_URL and does one of:

    send                  1: publish "hello, lapse" to the quorum queue greetings
    receive               1: print what arrives on greetings (auto-ack) until SIGINT
    add WORD...           2: publish the words, persistent, to the quorum queue jobs
    work                  2: take jobs one at a time (prefetch 1), acking each, until SIGINT
    emit WORD...          3: publish the words to the fanout exchange logs
    listen                3: print what logs fans out to a queue of its own until SIGINT
    log SEVERITY WORD...  4: publish the words to the direct exchange direct_logs, keyed by the severity
    watch SEVERITY...     4: print what direct_logs routes for those severities until SIGINT
    tell KEY WORD...      5: publish the words to the topic exchange topic_logs with the key
    hear PATTERN...       5: print what topic_logs routes for those patterns until SIGINT

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


def subscribe(channel, exchange, kind, keys, what, handle):
    """Binds a queue of its own (server-named, exclusive) to exchange with
    each of keys and consumes from it, auto-ack, until SIGINT."""
    channel.exchange_declare(exchange=exchange, exchange_type=kind)
    queue = channel.queue_declare(queue="", exclusive=True).method.queue
    for key in keys:
        channel.queue_bind(queue=queue, exchange=exchange, routing_key=key)
    channel.basic_consume(queue=queue, on_message_callback=handle, auto_ack=True)
    print(f"waiting on {what}", flush=True)
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
    elif command == "emit":
        line = " ".join(args)
        channel.exchange_declare(exchange="logs", exchange_type="fanout")
        channel.basic_publish(exchange="logs", routing_key="", body=line)
        print(f"emitted: {line}")
    elif command == "listen":
        subscribe(channel, "logs", "fanout", [""], "logs",
                  lambda ch, method, props, body: print(f"got: {body.decode()}", flush=True))
    elif command in ("log", "tell"):
        if not args:
            sys.exit(f"{command} wants a key and words")
        exchange, kind = ("direct_logs", "direct") if command == "log" else ("topic_logs", "topic")
        line = " ".join(args[1:])
        channel.exchange_declare(exchange=exchange, exchange_type=kind)
        channel.basic_publish(exchange=exchange, routing_key=args[0], body=line)
        print(f"{'logged' if command == 'log' else 'told'} {args[0]}: {line}")
    elif command in ("watch", "hear"):
        if not args:
            sys.exit(f"{command} wants at least one key")
        exchange, kind = ("direct_logs", "direct") if command == "watch" else ("topic_logs", "topic")
        subscribe(channel, exchange, kind, args, ",".join(args),
                  lambda ch, method, props, body: print(f"got {method.routing_key}: {body.decode()}", flush=True))
    else:
        sys.exit(f"unknown command {command!r}: want send, receive, add, work, emit, listen, log, watch, tell or hear")
    conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

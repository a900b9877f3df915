"""Scenarios that drive a RabbitMQ broker with pika (Debian's python3-pika).

Run by rabbitmq/python_test.go: `python3 pika_client.py SCENARIO` with
LAPSE_AMQP_URL (the broker) and LAPSE_CONTROL_URL (POST /advance?by=60s
moves the broker's clock and returns once what fell due is applied). Each
scenario prints one JSON line, which the Go test checks.
"""

import json
import os
import sys
import urllib.request

import pika

URL = os.environ["LAPSE_AMQP_URL"]
CONTROL = os.environ.get("LAPSE_CONTROL_URL", "")


def advance(by):
    """Moves the broker's clock by `by` (a Go duration)."""
    req = urllib.request.Request(CONTROL + "/advance?by=" + by, method="POST")
    urllib.request.urlopen(req, timeout=30).read()


def connect():
    return pika.BlockingConnection(pika.URLParameters(URL))


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def ttl_dead_letter():
    """A queue with x-message-ttl and a dead-letter exchange: a confirmed
    persistent message expires, on the moved clock, into the DLX's queue,
    with an x-death header whose fields come in RabbitMQ's order."""
    conn = connect()
    ch = conn.channel()
    ch.confirm_delivery()
    ch.exchange_declare("pika.dlx", exchange_type="fanout")
    ch.queue_declare("pika.dead")
    ch.queue_bind("pika.dead", "pika.dlx")
    ch.queue_declare("pika.work", durable=True,
                     arguments={"x-message-ttl": 60000, "x-dead-letter-exchange": "pika.dlx"})
    # With confirms on, basic_publish returns once the broker acked it (a
    # nack would raise).
    ch.basic_publish("", "pika.work", b"m1",
                     pika.BasicProperties(delivery_mode=2, headers={"app": "pika"}))
    before = ch.queue_declare("pika.work", passive=True).method.message_count
    advance("59s")
    at59 = ch.queue_declare("pika.work", passive=True).method.message_count
    advance("1s")
    after = ch.queue_declare("pika.work", passive=True).method.message_count
    method, props, body = ch.basic_get("pika.dead")
    death = props.headers["x-death"][0]
    ch.basic_ack(method.delivery_tag)
    left = ch.queue_declare("pika.dead", passive=True).method.message_count
    conn.close()
    return {
        "confirmed": True, "before": before, "at59s": at59, "after": after,
        "body": body.decode(), "deliveryMode": props.delivery_mode, "app": text(props.headers.get("app")),
        "reason": text(death["reason"]), "queue": text(death["queue"]), "count": death["count"],
        "fields": list(death.keys()), "firstDeathReason": text(props.headers.get("x-first-death-reason")),
        "deadLeft": left,
    }


def x_death_order():
    """A message that expires in two queues, one after the other: pika
    keeps a table's fields in their order on the wire, so the order of each
    x-death entry's fields shows."""
    conn = connect()
    ch = conn.channel()
    ch.queue_declare("pika.dead2")
    ch.queue_declare("pika.second", arguments={"x-message-ttl": 1000, "x-dead-letter-exchange": "",
                                               "x-dead-letter-routing-key": "pika.dead2"})
    ch.queue_declare("pika.first", arguments={"x-message-ttl": 1000, "x-dead-letter-exchange": "",
                                              "x-dead-letter-routing-key": "pika.second"})
    # Confirmed, so that the publish is in the queue before the clock moves
    # (the advance goes over HTTP and could overtake it).
    ch.confirm_delivery()
    ch.basic_publish("", "pika.first", b"m1", pika.BasicProperties(expiration="1000"))
    advance("1s")
    advance("1s")
    method, props, body = ch.basic_get("pika.dead2", auto_ack=True)
    conn.close()
    return {"entries": [{"queue": text(d["queue"]), "fields": list(d.keys())} for d in props.headers["x-death"]]}


def per_message_ttl():
    """A message's expiration property expires it on the moved clock; with
    the queue's x-message-ttl too, the lower of the two applies."""
    conn = connect()
    ch = conn.channel()
    ch.queue_declare("pika.ttl", arguments={"x-message-ttl": 10000})
    ch.basic_publish("", "pika.ttl", b"short", pika.BasicProperties(expiration="2000"))
    ch.basic_publish("", "pika.ttl", b"long", pika.BasicProperties(expiration="60000"))

    def count():
        return ch.queue_declare("pika.ttl", passive=True).method.message_count

    before = count()
    advance("2s")
    at2 = count()
    advance("8s")
    at10 = count()
    conn.close()
    return {"before": before, "at2s": at2, "at10s": at10}


def publish_consume_ack():
    """Confirmed publishes, a consumer with manual acks and a prefetch of
    one, a nack that requeues, then acks: the queue ends empty."""
    conn = connect()
    ch = conn.channel()
    ch.confirm_delivery()
    ch.queue_declare("pika.jobs")
    for body in (b"j1", b"j2", b"j3"):
        ch.basic_publish("", "pika.jobs", body, mandatory=True)
    ch.basic_qos(prefetch_count=1)
    got = []

    def on_message(c, method, props, body):
        got.append({"body": body.decode(), "redelivered": method.redelivered})
        if body == b"j1" and not method.redelivered:
            c.basic_nack(method.delivery_tag, requeue=True)
        else:
            c.basic_ack(method.delivery_tag)
        if len(got) == 4:
            c.stop_consuming()

    ch.basic_consume("pika.jobs", on_message)
    conn.call_later(10, ch.stop_consuming)
    ch.start_consuming()
    left = ch.queue_declare("pika.jobs", passive=True).method.message_count
    conn.close()
    return {"received": got, "left": left}


def delayed_exchange():
    """The delayed-message plugin's exchange: a declare without
    x-delayed-type is refused; a message with x-delay is held until the
    moved clock passes its delay, then routed with x-delay negated."""
    conn = connect()
    ch = conn.channel()
    refused = None
    try:
        ch.exchange_declare("pika.delayed.bad", "x-delayed-message")
    except pika.exceptions.ChannelClosedByBroker as e:
        refused = {"code": e.reply_code, "text": e.reply_text}
    ch = conn.channel()
    ch.exchange_declare("pika.delayed", "x-delayed-message", arguments={"x-delayed-type": "direct"})
    ch.queue_declare("pika.later")
    ch.queue_bind("pika.later", "pika.delayed", "later")
    ch.confirm_delivery()
    ch.basic_publish("pika.delayed", "later", b"later", pika.BasicProperties(headers={"x-delay": 5000}))

    def count():
        return ch.queue_declare("pika.later", passive=True).method.message_count

    before = count()
    advance("4999ms")
    almost = count()
    advance("1ms")
    _, props, body = ch.basic_get("pika.later", auto_ack=True)
    conn.close()
    return {"refused": refused, "before": before, "almost": almost, "body": text(body),
            "xDelay": props.headers["x-delay"]}


def priorities():
    """The issue's priority queue as a new user tries it: priorities 3, 6,
    3, none, 10 and 200 published into x-max-priority 10 come back by
    basic.get as 10, 200, 6, 3, 3, none (200 counts as the maximum, none as
    0, one priority in publish order)."""
    conn = connect()
    ch = conn.channel()
    ch.queue_declare("pika.prio", arguments={"x-max-priority": 10})
    ch.confirm_delivery()
    for body, prio in [("a3", 3), ("b6", 6), ("c3", 3), ("dnone", None), ("e10", 10), ("f200", 200)]:
        ch.basic_publish("", "pika.prio", body.encode(), pika.BasicProperties(priority=prio))
    got = []
    while True:
        method, _, body = ch.basic_get("pika.prio", auto_ack=True)
        if method is None:
            break
        got.append(text(body))
    conn.close()
    return {"order": got}


SCENARIOS = {
    "priorities": priorities,
    "delayed-exchange": delayed_exchange,
    "ttl-dead-letter": ttl_dead_letter,
    "x-death-order": x_death_order,
    "per-message-ttl": per_message_ttl,
    "publish-consume-ack": publish_consume_ack,
}

if __name__ == "__main__":
    name = sys.argv[1]
    out = SCENARIOS[name]()
    out["scenario"] = name
    print(json.dumps(out))

"""Scenarios that drive a RabbitMQ broker with the current pika (1.4) and
aio-pika (10.x) of requirements.txt, from the venv that .ci/run makes.

Run by rabbitmq/python_sdk_test.go: `python current_clients.py SCENARIO`
with LAPSE_AMQP_URL (the broker), LAPSE_CONTROL_URL (POST /advance?by=60s
moves the broker's clock and returns once what fell due is applied; lapse
only) and LAPSE_MANAGEMENT_URL (the management API, with its
credentials). Each scenario prints one JSON line, which the Go test checks.
"""

import asyncio
import base64
import json
import os
import sys
import time
import urllib.parse
import urllib.request
import uuid

import aio_pika
import pika

URL = os.environ["LAPSE_AMQP_URL"]
CONTROL = os.environ.get("LAPSE_CONTROL_URL", "")


def advance(by):
    """Moves the broker's clock by `by` (a Go duration)."""
    req = urllib.request.Request(CONTROL + "/advance?by=" + by, method="POST")
    urllib.request.urlopen(req, timeout=30).read()


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def management(method, path, headers=None):
    """Calls the management API of LAPSE_MANAGEMENT_URL; returns the status
    and the decoded body."""
    base = urllib.parse.urlsplit(os.environ["LAPSE_MANAGEMENT_URL"])
    host = base.hostname + (":%d" % base.port if base.port else "")
    req = urllib.request.Request("%s://%s%s" % (base.scheme, host, path), method=method, headers=headers or {})
    cred = "%s:%s" % (urllib.parse.unquote(base.username or ""), urllib.parse.unquote(base.password or ""))
    req.add_header("Authorization", "Basic " + base64.b64encode(cred.encode()).decode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read()
        return resp.status, json.loads(body) if body else None


def await_connections(name, n):
    """The connections whose client named them `name`, once there are n
    (RabbitMQ lists a connection up to 5 s late), or what there is after 20 s."""
    deadline = time.time() + 20
    while True:
        _, conns = management("GET", "/api/connections")
        found = [c for c in conns if c.get("client_properties", {}).get("connection_name") == name]
        if len(found) == n or time.time() > deadline:
            return found
        time.sleep(0.25)


def force_close(name, reason):
    """Closes the one connection named `name` through the management API."""
    old = await_connections(name, 1)
    status, _ = management("DELETE", "/api/connections/" + urllib.parse.quote(old[0]["name"], safe=""),
                           {"X-Reason": reason})
    return old[0]["name"], status


def death_of(headers):
    """What a scenario reports of a dead-lettered message's headers: the
    first x-death entry as the client decoded it, and the x-first-death-*
    headers."""
    death = headers["x-death"][0]
    return {
        "reason": text(death["reason"]), "queue": text(death["queue"]), "exchange": text(death["exchange"]),
        "routingKeys": [text(k) for k in death["routing-keys"]], "count": death["count"],
        "fields": list(death.keys()), "timeType": type(death["time"]).__name__,
        "firstDeathReason": text(headers.get("x-first-death-reason")),
        "firstDeathQueue": text(headers.get("x-first-death-queue")),
        "firstDeathExchange": text(headers.get("x-first-death-exchange")),
    }


def pika_ttl_dead_letter():
    """pika 1.4: a queue with x-message-ttl (60 s) and a dead-letter
    exchange; a persistent message published with confirms expires on the
    moved clock (not at 59 s) into the dead-letter queue, whose x-death
    header pika decodes."""
    conn = pika.BlockingConnection(pika.URLParameters(URL))
    ch = conn.channel()
    ch.confirm_delivery()
    ch.exchange_declare("pika14.dlx", exchange_type="topic", durable=True)
    ch.queue_declare("pika14.dead", durable=True)
    ch.queue_bind("pika14.dead", "pika14.dlx", routing_key="#")
    ch.exchange_declare("pika14.jobs", exchange_type="direct", durable=True)
    ch.queue_declare("pika14.work", durable=True,
                     arguments={"x-message-ttl": 60000, "x-dead-letter-exchange": "pika14.dlx"})
    ch.queue_bind("pika14.work", "pika14.jobs", routing_key="job")
    # With confirms on, basic_publish returns once the broker acked the
    # message; a nack raises NackError, an unroutable mandatory one
    # UnroutableError.
    ch.basic_publish("pika14.jobs", "job", b"m1",
                     pika.BasicProperties(delivery_mode=pika.DeliveryMode.Persistent, headers={"app": "pika14"}),
                     mandatory=True)
    before = ch.queue_declare("pika14.work", passive=True).method.message_count
    advance("59s")
    at59 = ch.queue_declare("pika14.work", passive=True).method.message_count
    advance("1s")
    after = ch.queue_declare("pika14.work", passive=True).method.message_count
    method, props, body = ch.basic_get("pika14.dead")
    ch.basic_ack(method.delivery_tag)
    out = {"before": before, "at59s": at59, "after": after, "body": body.decode(),
           "deliveryMode": props.delivery_mode, "app": text(props.headers.get("app")),
           "routingKey": method.routing_key}
    out.update(death_of(props.headers))
    conn.close()
    return out


def pika_reconnect():
    """pika 1.4 has no automatic recovery: a consumer on a
    BlockingConnection sees ConnectionClosedByBroker (320) when the test
    closes its connection through the management API, connects again,
    declares its queue again and goes on consuming."""
    name = "pika14-reconnect-" + uuid.uuid4().hex[:8]
    params = pika.URLParameters(URL)
    params.client_properties = {"connection_name": name}
    got, out = [], {}

    def consumer():
        conn = pika.BlockingConnection(params)
        ch = conn.channel()
        ch.queue_declare(name, auto_delete=True)
        ch.basic_consume(name, lambda c, m, p, b: (got.append(b.decode()), c.basic_ack(m.delivery_tag)))
        return conn, ch

    conn, ch = consumer()
    ch.basic_publish("", name, b"m1")
    deadline = time.time() + 10
    while not got and time.time() < deadline:
        conn.process_data_events(time_limit=0.2)
    out["before"] = list(got)
    old, out["deleteStatus"] = force_close(name, "pika reconnect test")
    try:
        deadline = time.time() + 10
        while time.time() < deadline:
            conn.process_data_events(time_limit=0.5)
        out["closed"] = None
    except pika.exceptions.ConnectionClosedByBroker as e:
        out["closed"] = {"code": e.reply_code, "text": e.reply_text}
    conn, ch = consumer()
    ch.basic_publish("", name, b"m2")
    deadline = time.time() + 10
    while len(got) < 2 and time.time() < deadline:
        conn.process_data_events(time_limit=0.2)
    out["after"] = got[1:]
    new = await_connections(name, 1)
    out["listedAfter"] = len(new)
    out["newConnection"] = bool(new) and new[0]["name"] != old
    conn.close()
    return out


async def aio_ttl_dead_letter():
    """aio-pika 10: the same TTL queue and dead-letter exchange, declared
    through its robust connection; publish awaits the broker's confirm."""
    conn = await aio_pika.connect_robust(URL)
    async with conn:
        ch = await conn.channel(publisher_confirms=True)
        dlx = await ch.declare_exchange("aio.dlx", aio_pika.ExchangeType.TOPIC, durable=True)
        dead = await ch.declare_queue("aio.dead", durable=True)
        await dead.bind(dlx, routing_key="#")
        jobs = await ch.declare_exchange("aio.jobs", aio_pika.ExchangeType.DIRECT, durable=True)
        work = await ch.declare_queue("aio.work", durable=True,
                                      arguments={"x-message-ttl": 60000, "x-dead-letter-exchange": "aio.dlx"})
        await work.bind(jobs, routing_key="job")
        confirm = await jobs.publish(
            aio_pika.Message(b"m1", delivery_mode=aio_pika.DeliveryMode.PERSISTENT, headers={"app": "aio-pika"}),
            routing_key="job", mandatory=True)
        # A passive declare_queue returns the channel's cached Queue with
        # its first DeclareOk; Queue.declare asks the broker again.
        before = (await work.declare()).message_count
        advance("59s")
        at59 = (await work.declare()).message_count
        advance("1s")
        after = (await work.declare()).message_count
        msg = await dead.get(timeout=10)
        await msg.ack()
        out = {"confirm": type(confirm).__name__, "before": before, "at59s": at59, "after": after,
               "body": msg.body.decode(), "deliveryMode": int(msg.delivery_mode),
               "app": text(msg.headers.get("app")), "routingKey": msg.routing_key}
        out.update(death_of(msg.headers))
        return out


async def aio_reconnect():
    """aio-pika 10's robust connection: the test closes it through the
    management API; aio-pika connects again by itself, restores its
    channel, its queue and its consumer, and the consumer gets what is
    published after."""
    name = "aio-reconnect-" + uuid.uuid4().hex[:8]
    conn = await aio_pika.connect_robust(URL, client_properties={"connection_name": name},
                                         reconnect_interval=0.5)
    out, got = {}, []
    reconnected = asyncio.Event()
    conn.reconnect_callbacks.add(lambda *a: reconnected.set())
    arrived = asyncio.Condition()

    async def on_message(msg):
        async with msg.process():
            got.append(msg.body.decode())
        async with arrived:
            arrived.notify_all()

    async with conn:
        ch = await conn.channel()
        q = await ch.declare_queue(name, auto_delete=True)
        await q.consume(on_message)

        async def publish_and_wait(body, n):
            await ch.default_exchange.publish(aio_pika.Message(body.encode()), routing_key=name)
            async with arrived:
                await asyncio.wait_for(arrived.wait_for(lambda: len(got) >= n), 10)

        await publish_and_wait("m1", 1)
        out["before"] = list(got)
        loop = asyncio.get_running_loop()
        old, out["deleteStatus"] = await loop.run_in_executor(None, force_close, name, "aio-pika reconnect test")
        await asyncio.wait_for(reconnected.wait(), 20)
        out["reconnected"] = True
        await publish_and_wait("m2", 2)
        out["after"] = got[1:]
        new = await loop.run_in_executor(None, await_connections, name, 1)
        out["listedAfter"] = len(new)
        out["newConnection"] = bool(new) and new[0]["name"] != old
    return out


SCENARIOS = {
    "pika-ttl-dead-letter": pika_ttl_dead_letter,
    "pika-reconnect": pika_reconnect,
    "aio-ttl-dead-letter": aio_ttl_dead_letter,
    "aio-reconnect": aio_reconnect,
}

if __name__ == "__main__":
    name = sys.argv[1]
    run = SCENARIOS[name]
    out = asyncio.run(run()) if asyncio.iscoroutinefunction(run) else run()
    out["scenario"] = name
    print(json.dumps(out))

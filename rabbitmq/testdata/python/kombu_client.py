"""Scenarios that drive a RabbitMQ broker with kombu (Debian's python3-kombu,
on its py-amqp transport).

Run by rabbitmq/python_test.go: `python3 kombu_client.py SCENARIO` with
LAPSE_AMQP_URL (the broker), LAPSE_CONTROL_URL (POST /advance?by=60s moves
the broker's clock) and, for the recovery scenario, LAPSE_MANAGEMENT_URL
(the management API, with its credentials). Each scenario prints one JSON
line, which the Go test checks.
"""

import base64
import json
import os
import sys
import time
import urllib.parse
import urllib.request
import uuid

from kombu import Connection, Consumer, Exchange, Producer, Queue

URL = os.environ["LAPSE_AMQP_URL"]
CONTROL = os.environ.get("LAPSE_CONTROL_URL", "")


def advance(by):
    """Moves the broker's clock by `by` (a Go duration)."""
    req = urllib.request.Request(CONTROL + "/advance?by=" + by, method="POST")
    urllib.request.urlopen(req, timeout=30).read()


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def ttl_dead_letter():
    """A queue with x-message-ttl and a dead-letter exchange, declared by
    kombu: a message published with confirms expires, on the moved clock,
    into the dead-letter queue."""
    dlx = Exchange("kombu.dlx", type="fanout")
    dead = Queue("kombu.dead", exchange=dlx)
    jobs = Exchange("kombu.jobs", type="direct")
    work = Queue("kombu.work", exchange=jobs, routing_key="job",
                 queue_arguments={"x-message-ttl": 60000, "x-dead-letter-exchange": "kombu.dlx"})
    with Connection(URL, transport_options={"confirm_publish": True}) as conn:
        ch = conn.channel()
        dead(ch).declare()
        producer = Producer(ch)
        producer.publish({"n": 1}, exchange=jobs, routing_key="job", serializer="json",
                         declare=[work], retry=True)
        before = work(ch).queue_declare(passive=True).message_count
        advance("60s")
        gone = work(ch).get(no_ack=True) is None
        msg = dead(ch).get(no_ack=False)
        death = msg.headers["x-death"][0]
        payload = msg.decode()
        msg.ack()
        return {"before": before, "workEmpty": gone, "payload": payload,
                "reason": text(death["reason"]), "queue": text(death["queue"]),
                "exchange": text(death["exchange"]), "routingKeys": [text(k) for k in death["routing-keys"]]}


def publish_consume_ack():
    """Publishes with confirms and consumes with a kombu Consumer, acking
    each message; the queue ends empty."""
    jobs = Exchange("kombu.tasks", type="direct")
    q = Queue("kombu.tasks", exchange=jobs, routing_key="task")
    got = []
    with Connection(URL, transport_options={"confirm_publish": True}) as conn:
        producer = conn.Producer(serializer="json")
        for n in range(3):
            producer.publish({"n": n}, exchange=jobs, routing_key="task", declare=[q], retry=True)

        def on_message(body, message):
            got.append(body["n"])
            message.ack()

        with Consumer(conn, queues=[q], callbacks=[on_message], accept=["json"]):
            deadline = time.time() + 10
            while len(got) < 3 and time.time() < deadline:
                conn.drain_events(timeout=1)
        left = q(conn.default_channel).queue_declare(passive=True).message_count
    return {"received": got, "left": left}


def priorities():
    """kombu's max_priority (Queue(max_priority=10), which declares
    x-max-priority) with priorities published through its Producer, and a
    Consumer taking them one at a time (prefetch 1): the highest first, one
    priority in publish order."""
    jobs = Exchange("kombu.prio", type="direct")
    q = Queue("kombu.prio", exchange=jobs, routing_key="p", max_priority=10)
    got = []
    with Connection(URL, transport_options={"confirm_publish": True}) as conn:
        producer = conn.Producer(serializer="json")
        for n, prio in [(1, 3), (2, 6), (3, 3), (4, 0), (5, 10), (6, 200)]:
            producer.publish({"n": n}, exchange=jobs, routing_key="p", priority=prio,
                             declare=[q], retry=True)

        def on_message(body, message):
            got.append(body["n"])
            message.ack()

        with Consumer(conn, [q], callbacks=[on_message], prefetch_count=1):
            deadline = time.time() + 10
            while len(got) < 6 and time.time() < deadline:
                conn.drain_events(timeout=1)
    return {"order": got}


def management(method, path, headers=None):
    """Calls the management API of LAPSE_MANAGEMENT_URL."""
    base = urllib.parse.urlsplit(os.environ["LAPSE_MANAGEMENT_URL"])
    req = urllib.request.Request(
        "%s://%s%s" % (base.scheme, base.hostname + (":%d" % base.port if base.port else ""), path),
        method=method, headers=headers or {})
    cred = "%s:%s" % (urllib.parse.unquote(base.username or ""), urllib.parse.unquote(base.password or ""))
    req.add_header("Authorization", "Basic " + base64.b64encode(cred.encode()).decode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read()
        return resp.status, json.loads(body) if body else None


def connections_named(name):
    _, conns = management("GET", "/api/connections")
    return [c for c in conns if c.get("client_properties", {}).get("connection_name") == name]


def await_connections(name, n):
    """The connections named name once there are n of them (RabbitMQ lists
    connections up to 5 s late), or what there is after 20 s."""
    deadline = time.time() + 20
    while True:
        found = connections_named(name)
        if len(found) == n or time.time() > deadline:
            return found
        time.sleep(0.25)


def recovery():
    """Connection recovery as kombu does it: the test finds the connection
    by its connection_name and drops it through the management API; kombu
    sees the 320 CONNECTION_FORCED, and Connection.ensure reconnects and
    publishes again, and consuming goes on over the new connection."""
    name = "kombu-recovery-" + uuid.uuid4().hex[:8]
    ex = Exchange("kombu.recovery", type="direct", auto_delete=True)
    q = Queue(name, exchange=ex, routing_key="r", auto_delete=True)
    out = {}
    with Connection(URL, transport_options={"confirm_publish": True,
                                            "client_properties": {"connection_name": name}}) as conn:
        producer = conn.Producer(serializer="json")
        publish = conn.ensure(producer, producer.publish, max_retries=5, interval_start=0, interval_step=0.5)
        publish({"n": 1}, exchange=ex, routing_key="r", declare=[q])
        first = q(conn.default_channel).get(no_ack=True)
        out["before"] = first.decode()["n"] if first else None
        old = await_connections(name, 1)
        out["listedBefore"] = len(old)
        status, _ = management("DELETE", "/api/connections/" + urllib.parse.quote(old[0]["name"], safe=""),
                               {"X-Reason": "kombu recovery test"})
        out["deleteStatus"] = status
        try:
            conn.drain_events(timeout=5)
            out["closed"] = None
        except conn.connection_errors as e:
            out["closed"] = {"code": getattr(e, "code", None), "text": str(getattr(e, "reply_text", e))}
        # kombu's recovery: ensure revives the connection and the producer's
        # channel, then publishes.
        publish({"n": 2}, exchange=ex, routing_key="r", declare=[q])
        got = []
        with Consumer(conn, queues=[q], callbacks=[lambda body, m: (got.append(body["n"]), m.ack())],
                      accept=["json"]):
            deadline = time.time() + 10
            while not got and time.time() < deadline:
                conn.drain_events(timeout=1)
        out["after"] = got
        new = await_connections(name, 1)
        out["listedAfter"] = len(new)
        out["newConnection"] = bool(new) and new[0]["name"] != old[0]["name"]
    return out


SCENARIOS = {
    "priorities": priorities,
    "ttl-dead-letter": ttl_dead_letter,
    "publish-consume-ack": publish_consume_ack,
    "recovery": recovery,
}

if __name__ == "__main__":
    name = sys.argv[1]
    out = SCENARIOS[name]()
    out["scenario"] = name
    print(json.dumps(out))

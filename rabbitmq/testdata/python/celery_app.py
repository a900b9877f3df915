"""Scenarios that run a Celery app (requirements.txt's celery, on kombu's
py-amqp transport) against a RabbitMQ broker: a worker in this process
runs a task and answers the control commands, and a countdown task goes
through Celery's native delayed delivery as lapse's clock moves. The
flow is that of Celery's "First steps with Celery" (an `add` task called
with `delay`) and of its guide to ETA and countdown on quorum queues;
the program is ours. Against a real RabbitMQ (no LAPSE_CONTROL_URL) the
countdown scenario stops before the clock would move.

Run by rabbitmq/celery_test.go: `python celery_app.py SCENARIO` with
LAPSE_AMQP_URL (the broker), LAPSE_CONTROL_URL (POST /advance?by=60s;
lapse only) and LAPSE_MANAGEMENT_URL (the management API, with its
credentials). Each scenario prints one JSON line, which the Go test checks.
"""

import json
import logging
import os
import sys
import time
import urllib.error
import uuid

from celery import Celery
from celery.contrib.testing.worker import start_worker
from kombu import Exchange, Queue
from kombu.transport.native_delayed_delivery import level_name

from current_clients import CONTROL, advance, management

URL = os.environ["LAPSE_AMQP_URL"]


def make_app(name, quorum=False):
    """A Celery app on the broker, its results over rpc:// (replies on the
    broker too). A quorum app's task queue is a quorum queue bound to a
    topic exchange, which is what Celery's native delayed delivery needs."""
    app = Celery(name, broker=URL.replace("amqp://", "pyamqp://", 1), backend="rpc://")
    app.conf.update(
        broker_connection_retry_on_startup=False,
        broker_connection_max_retries=1,
        worker_hijack_root_logger=False,
        task_default_queue=name,
        result_expires=300,
    )
    if quorum:
        app.conf.update(
            task_queues=[Queue(name, Exchange(name, type="topic"), routing_key=name,
                               queue_arguments={"x-queue-type": "quorum"})],
            task_default_exchange=name,
            task_default_exchange_type="topic",
            task_default_routing_key=name,
            broker_transport_options={"confirm_publish": True},
        )

    @app.task(name=name + ".add")
    def add(x, y):
        return x + y

    app.loader.import_module("celery.contrib.testing.tasks")  # the worker's ping check
    return app, add


def queue_args(name):
    """The arguments the broker holds for queue `name` (vhost /)."""
    _, q = management("GET", "/api/queues/%2F/" + name)
    return q.get("arguments", {})


def queue_depth(name, settle=None):
    """The messages queue `name` holds, ready or not, as the management API
    counts them. lapse counts them as they are; RabbitMQ's figures are up to
    5 s old, so against it (settle) the count is read until it is `settle`,
    for at most 20 s."""
    deadline = time.time() + 20
    while True:
        _, q = management("GET", "/api/queues/%2F/" + name)
        n = q.get("messages", 0)
        if settle is None or n == settle or time.time() > deadline:
            return n
        time.sleep(0.25)


def delete_queue(name):
    """Deletes queue `name` through the management API, if it is there: the
    scenarios leave nothing on a real RabbitMQ that a later run would see."""
    try:
        management("DELETE", "/api/queues/%2F/" + name)
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise


def worker_scenario():
    """A worker in this process runs `add`, its results coming back over
    rpc://; `ping` and `inspect` go through the control exchange
    (celery.pidbox). The worker's control queue expires (x-expires,
    x-message-ttl) and so does the result queue (x-expires)."""
    name = "cel" + uuid.uuid4().hex[:6]
    app, add = make_app(name)
    out = {}
    # The embedded worker takes 10 s to stop, against RabbitMQ too.
    with start_worker(app, perform_ping_check=True, loglevel="WARNING", shutdown_timeout=60):
        out["sum"] = add.delay(2, 3).get(timeout=30)
        out["sums"] = [r.get(timeout=30) for r in [add.delay(i, i) for i in range(3)]]
        pongs = app.control.ping(timeout=10, limit=1)
        out["pongs"] = len(pongs)
        out["pong"] = sorted(v["ok"] for reply in pongs for v in reply.values())
        active = app.control.inspect(timeout=10, limit=1).active_queues() or {}
        out["activeQueues"] = sorted("TASKS" if q["name"] == name else q["name"] for qs in active.values() for q in qs)
        # The worker's own control queue and the rpc:// result queue, as the
        # broker holds them while the worker runs.
        queues = [q["name"] for q in management("GET", "/api/queues/%2F")[1]]
        pidbox = [q for q in queues if q.endswith(".celery.pidbox")]
        results = [q for q in queues if q == app.backend.oid]
        out["pidboxQueues"] = len(pidbox)
        out["pidboxArgs"] = queue_args(pidbox[0]) if pidbox else None
        out["resultQueues"] = len(results)
        out["resultArgs"] = queue_args(results[0]) if results else None
    delete_queue(name)
    return out


def countdown_scenario():
    """`apply_async(countdown=3600)` on a quorum queue: Celery publishes to
    celery_delayed_27 with the delay's bits in the routing key, and each
    level's queue (x-message-ttl 2^level s) dead-letters it to the next
    level's exchange, until celery_delayed_delivery routes it to the task
    queue. Moving lapse's clock by 3,599 s leaves it on its way; one more
    second brings it to the task queue, where a worker would take it (and
    keep it until its ETA, by its own clock) and where kombu reads it here."""
    name = "celq" + uuid.uuid4().hex[:6]
    app, add = make_app(name, quorum=True)
    out = {}
    levels = [level_name(level) for level in range(28)]
    for level in levels:  # an earlier run's, on a real RabbitMQ
        delete_queue(level)
    # The worker declares the delayed delivery topology and binds the task
    # queue to it (its DelayedDelivery step); stop it before publishing so
    # that the test reads the queues, not the worker's prefetch.
    with start_worker(app, perform_ping_check=True, loglevel="WARNING", shutdown_timeout=60):
        pass
    out["levels"] = sorted(q["name"] for q in management("GET", "/api/queues/%2F")[1] if q["name"] in levels)
    args = queue_args("celery_delayed_11")
    out["level11"] = {k: args.get(k) for k in ("x-message-ttl", "x-dead-letter-exchange", "x-queue-type",
                                                "x-overflow", "x-dead-letter-strategy")}
    result = add.apply_async((20, 22), countdown=3600)
    out["published"] = bool(result.id)
    if not CONTROL:
        # A real RabbitMQ: its clock cannot move, so the scenario checks the
        # topology and where the message waits, and ends there.
        out["at0"] = {"level11": queue_depth("celery_delayed_11", settle=1), "task": queue_depth(name)}
        for queue in levels + [name]:
            delete_queue(queue)
        return out
    out["at0"] = {"level11": queue_depth("celery_delayed_11"), "task": queue_depth(name)}
    advance("2048s")
    out["at2048"] = {"level11": queue_depth("celery_delayed_11"), "level10": queue_depth("celery_delayed_10"),
                     "task": queue_depth(name)}
    advance("1551s")
    out["at3599"] = {"level4": queue_depth("celery_delayed_4"), "task": queue_depth(name)}
    advance("1s")
    out["at3600"] = {"level4": queue_depth("celery_delayed_4"), "task": queue_depth(name)}
    with app.connection_for_read() as conn:
        msg = conn.SimpleQueue(app.amqp.queues[name], no_ack=False).get(timeout=10)
        out["taskID"] = msg.headers.get("id") == result.id
        out["taskName"] = msg.headers.get("task", "").replace(name, "TASKS")
        out["ETA"] = bool(msg.headers.get("eta"))
        out["routingKey"] = msg.delivery_info.get("routing_key", "").split(".")[-1].replace(name, "TASKS")
        out["xDeath"] = [d["queue"] for d in msg.headers.get("x-death") or []]
        msg.ack()
    return out


SCENARIOS = {"celery-worker": worker_scenario, "celery-countdown": countdown_scenario}

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    scenario = sys.argv[1]
    result = SCENARIOS[scenario]()
    result["scenario"] = scenario
    print(json.dumps(result))

"""Scenarios that drive lapse with the current azure-servicebus 7.x (its own
pure-Python AMQP stack), sync and asyncio both.

    python scenarios.py SCENARIO        (sync)
    python scenarios.py aio_SCENARIO    (asyncio, scenarios_aio.py)

Environment: SERVICEBUS_CONNECTION_STRING (the emulator's, with
UseDevelopmentEmulator=true and lapse's AMQP port, or the service's with the
AMQPS port), LAPSE_CERT (lapse's certificate: the administration client
always builds https:// URLs, and AMQPS checks it), LAPSE_CONTROL_URL
(lapse's control API, to move its clock, which the tests freeze). Each
scenario prints one JSON line that servicebus_python7_test.go checks.
"""

import datetime
import json
import os
import sys
import time
import urllib.request

from azure.servicebus import (
    NEXT_AVAILABLE_SESSION as NEXT_AVAILABLE,
    AutoLockRenewer,
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusSubQueue,
)
from azure.servicebus.exceptions import (
    MessageLockLostError,
    ServiceBusError,
    SessionCannotBeLockedError,
    SessionLockLostError,
)
from azure.servicebus.management import (
    ServiceBusAdministrationClient,
    SqlRuleFilter,
)

CONN = os.environ["SERVICEBUS_CONNECTION_STRING"]
CERT = os.environ["LAPSE_CERT"]
CONTROL = os.environ["LAPSE_CONTROL_URL"]


def client(**kw):
    return ServiceBusClient.from_connection_string(CONN, connection_verify=CERT, **kw)


def admin():
    return ServiceBusAdministrationClient.from_connection_string(CONN, connection_verify=CERT)


def advance(by):
    """Moves lapse's clock; returns once everything due is applied."""
    req = urllib.request.Request(
        CONTROL + "/api/clock/advance",
        data=json.dumps({"by": by}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def lapse_now():
    """lapse's time, which the tests freeze and move."""
    with urllib.request.urlopen(CONTROL + "/api/clock") as resp:
        now = json.load(resp)["now"]
    return datetime.datetime.fromisoformat(now[:26].rstrip("Z") + "+00:00")


def body(msg):
    return b"".join(msg.body).decode()


def receive(receiver, n):
    """Receives n messages; lapse has them all, so no wait is long."""
    got = []
    for _ in range(20):
        got += receiver.receive_messages(max_message_count=n - len(got), max_wait_time=1)
        if len(got) >= n:
            break
    return got


def counts(adm, queue, want):
    """The queue's [active, dead-lettered, scheduled] counts once they are
    want, or after 5 s: a settlement is not acknowledged, so a request to
    the administration API right after it may overtake it."""
    deadline = time.monotonic() + 5
    while True:
        p = adm.get_queue_runtime_properties(queue)
        got = [p.active_message_count, p.dead_letter_message_count, p.scheduled_message_count]
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def error_name(fn):
    try:
        fn()
    except Exception as e:  # the type is what the scenario reports
        return type(e).__name__
    return None


def settle():
    """Send, then complete, abandon (and receive again), defer (and receive
    the deferred message by its sequence number) and dead-letter."""
    adm = admin()
    adm.create_queue("settle", max_delivery_count=5)
    out = {}
    with client() as c:
        with c.get_queue_sender("settle") as s:
            s.send_messages(ServiceBusMessage("done", message_id="m-1", application_properties={"color": "red"}))
            s.send_messages([ServiceBusMessage(b) for b in ("again", "later", "bad")])
        with c.get_queue_receiver("settle") as r:
            msgs = {body(m): m for m in receive(r, 4)}
            out["bodies"] = sorted(msgs)
            out["messageId"] = msgs["done"].message_id
            out["color"] = msgs["done"].application_properties[b"color"].decode()
            out["sequenceNumbers"] = sorted(m.sequence_number for m in msgs.values())
            out["deliveryCounts"] = sorted(m.delivery_count for m in msgs.values())
            r.complete_message(msgs["done"])
            r.abandon_message(msgs["again"])
            r.defer_message(msgs["later"])
            r.dead_letter_message(msgs["bad"], reason="not today", error_description="bad body")
            again = receive(r, 1)
            out["again"] = [[body(m), m.delivery_count] for m in again]
            r.complete_message(again[0])
            deferred = r.receive_deferred_messages([msgs["later"].sequence_number])
            out["deferred"] = [[body(m), str(m.state)] for m in deferred]
            r.complete_message(deferred[0])
        with c.get_queue_receiver("settle", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = receive(dlq, 1)
            out["deadLettered"] = [[body(m), m.dead_letter_reason, m.dead_letter_error_description] for m in dead]
            dlq.complete_message(dead[0])
        out["left"] = counts(adm, "settle", [0, 0, 0])
        out["missing"] = error_name(lambda: c.get_queue_sender("nope").send_messages(ServiceBusMessage("x")))
        # Refused with a rejected outcome, whose error the SDK reads by index.
        with c.get_queue_sender("settle") as s:
            out["tooBig"] = error_name(lambda: s.send_messages(ServiceBusMessage("x" * 300_000)))
    return out


def peek_schedule():
    """Peek (from a sequence number too); schedule two messages, cancel one,
    and receive the other once lapse's clock reaches its time (SB-4)."""
    adm = admin()
    adm.create_queue("peek")
    out = {}
    with client() as c:
        with c.get_queue_sender("peek") as s:
            s.send_messages([ServiceBusMessage(b) for b in ("a", "b", "c")])
            at = lapse_now() + datetime.timedelta(minutes=5)
            seqs = s.schedule_messages([ServiceBusMessage("keep"), ServiceBusMessage("drop")], at)
            out["scheduled"] = len(seqs)
            s.cancel_scheduled_messages(seqs[1])
        with c.get_queue_receiver("peek") as r:
            peeked = r.peek_messages(max_message_count=10)
            out["peeked"] = [[body(m), str(m.state)] for m in peeked]
            out["fromSecond"] = [body(m) for m in r.peek_messages(max_message_count=10, sequence_number=peeked[1].sequence_number)]
            out["noLocks"] = all(m.lock_token is None for m in peeked)
            for m in receive(r, 3):
                r.complete_message(m)
            out["beforeTime"] = [body(m) for m in r.receive_messages(max_message_count=1, max_wait_time=1)]
            advance("5m1s")
            due = receive(r, 1)
            out["due"] = [body(m) for m in due]
            for m in due:
                r.complete_message(m)
        out["left"] = counts(adm, "peek", [0, 0, 0])
    return out


def renew_lock():
    """renew_message_lock and AutoLockRenewer keep a 10 s lock past its end
    on lapse's moved clock; without a renewal the lock is lost (SB-7)."""
    adm = admin()
    adm.create_queue("renew", lock_duration=datetime.timedelta(seconds=10))
    out = {}
    with client() as c:
        with c.get_queue_sender("renew") as s:
            s.send_messages([ServiceBusMessage(b) for b in ("manual", "auto", "lost")])
        with c.get_queue_receiver("renew") as r:
            msgs = {body(m): m for m in receive(r, 3)}
            first = msgs["manual"].locked_until_utc
            with AutoLockRenewer() as renewer:
                renewer.register(r, msgs["auto"], max_lock_renewal_duration=60)
                # The renewer renews a lock that ends within 10 s, every
                # half second: after each move of the clock, wait for it.
                for step in range(2):
                    before = msgs["auto"].locked_until_utc
                    advance("6s")
                    if step == 0:
                        renewed = r.renew_message_lock(msgs["manual"])
                        out["renewedBy"] = round((renewed - first).total_seconds())
                    deadline = time.monotonic() + 10
                    while msgs["auto"].locked_until_utc <= before and time.monotonic() < deadline:
                        time.sleep(0.05)
                out["autoRenewedBy"] = round((msgs["auto"].locked_until_utc - first).total_seconds())
                r.complete_message(msgs["auto"])
            # 12 s on: the manual renewal holds; the lock of "lost" ran out.
            r.complete_message(msgs["manual"])
            out["lost"] = error_name(lambda: r.complete_message(msgs["lost"]))
        out["left"] = counts(adm, "renew", [1, 0, 0])
    return out


def ttl_dead_letter():
    """A message without a TTL takes the queue's default (SB-2); expired, it
    goes to the dead-letter queue with TTLExpiredException (SB-8)."""
    adm = admin()
    adm.create_queue(
        "ttl",
        default_message_time_to_live=datetime.timedelta(minutes=2),
        dead_lettering_on_message_expiration=True,
    )
    out = {}
    with client() as c:
        with c.get_queue_sender("ttl") as s:
            s.send_messages(ServiceBusMessage("by default"))
            s.send_messages(ServiceBusMessage("own ttl", time_to_live=datetime.timedelta(minutes=1)))
            s.send_messages(ServiceBusMessage("long", time_to_live=datetime.timedelta(hours=1)))
        advance("1m30s")
        out["after90s"] = counts(adm, "ttl", [2, 1, 0])[:2]
        advance("1m")
        out["after150s"] = counts(adm, "ttl", [0, 3, 0])[:2]
        with c.get_queue_receiver("ttl", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = receive(dlq, 3)
            out["deadLettered"] = sorted([body(m), m.dead_letter_reason] for m in dead)
            for m in dead:
                dlq.complete_message(m)
    return out


def ms(td):
    return None if td is None else round(td.total_seconds() * 1000)


def expiry_of(peeked, m):
    """What a queue's message carries (issue 31.2), peeked and received."""
    p = m.raw_amqp_message.properties
    return {
        "peekTimeToLive": ms(peeked.time_to_live),
        "timeToLive": ms(m.time_to_live),
        "expiresAfterEnqueuedMs": ms(m.expires_at_utc - m.enqueued_time_utc),
        "timesAdded": [p.creation_time, p.absolute_expiry_time] if p else [None, None],
    }


def expiry_properties():
    """Issue 31.2: the entity's default TTL adds no creation-time or
    absolute-expiry-time; one beyond 32 bits of milliseconds comes as the
    largest; a defer counts the delivery and dead-letters at the limit."""
    adm = admin()
    adm.create_queue("day", default_message_time_to_live=datetime.timedelta(days=1))
    adm.create_queue("long", default_message_time_to_live=datetime.timedelta(days=60))
    adm.create_queue("d")
    adm.create_queue("once", max_delivery_count=1)
    out = {}
    with client() as c:
        for q in ("day", "long"):
            with c.get_queue_sender(q) as s:
                s.send_messages(ServiceBusMessage(q))
            with c.get_queue_receiver(q) as r:
                [peeked] = r.peek_messages(1)
                [m] = receive(r, 1)
                out[q] = expiry_of(peeked, m)
        with c.get_queue_sender("d") as s:
            s.send_messages(ServiceBusMessage("d"))
        with c.get_queue_receiver("d") as r:
            [m] = receive(r, 1)
            r.defer_message(m)
            [peeked] = r.peek_messages(1, sequence_number=m.sequence_number)
            [d] = r.receive_deferred_messages([m.sequence_number])
            out["deferred"] = [m.delivery_count, peeked.delivery_count, d.delivery_count]
        with c.get_queue_sender("once") as s:
            s.send_messages(ServiceBusMessage("x"))
        with c.get_queue_receiver("once") as r:
            [m] = receive(r, 1)
            r.defer_message(m)
        with c.get_queue_receiver("once", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = receive(dlq, 1)
            out["deferAtTheLimit"] = dead[0].dead_letter_reason if dead else "not dead-lettered"
    return out


def sessions():
    """A named session's messages in order, the held session refused to a
    second receiver, state, renew-session-lock, the next session, and the
    session lock lost on lapse's moved clock (SS-1 to SS-4)."""
    adm = admin()
    adm.create_queue("sess", requires_session=True, lock_duration=datetime.timedelta(seconds=30))
    out = {"requiresSession": adm.get_queue("sess").requires_session}
    with client() as c:
        with c.get_queue_sender("sess") as s:
            s.send_messages([ServiceBusMessage(b, session_id=b[0]) for b in ("a1", "a2", "b1")])
        with c.get_queue_receiver("sess", session_id="a") as r:
            out["session"] = r.session.session_id
            got = receive(r, 2)
            out["bodies"] = [body(m) for m in got]
            # The SDK retries a refused session three times: once is enough.
            with client(retry_total=0) as c2:
                out["secondAccept"] = error_name(lambda: c2.get_queue_receiver("sess", session_id="a").__enter__())
            r.session.set_state("step 1")
            out["state"] = r.session.get_state().decode()
            first = r.session.locked_until_utc
            advance("20s")
            out["renewedBy"] = round((r.session.renew_lock() - first).total_seconds())
            for m in got:
                r.complete_message(m)
        with c.get_queue_receiver("sess", session_id=NEXT_AVAILABLE) as r:
            out["next"] = r.session.session_id
            got = receive(r, 1)
            out["nextBodies"] = [[body(m), m.delivery_count] for m in got]
            advance("31s")
            out["lockLost"] = error_name(lambda: r.complete_message(got[0]))
        with c.get_queue_receiver("sess", session_id="b") as r:
            out["again"] = [[body(m), m.delivery_count] for m in receive(r, 1)]
        with c.get_queue_receiver("sess", session_id="a") as r:
            out["stateOfA"] = r.session.get_state().decode()
            r.session.set_state(None)
            out["cleared"] = r.session.get_state()
    return out





def administration():
    """The administration client: create, get, update and list queues,
    topics, subscriptions and rules; runtime properties; a message sent to
    the topic reaches the subscription its rule selects."""
    adm = admin()
    adm.create_queue("q", lock_duration=datetime.timedelta(seconds=45))
    q = adm.get_queue("q")
    q.max_delivery_count = 3
    q.default_message_time_to_live = datetime.timedelta(hours=1)
    adm.update_queue(q)
    q = adm.get_queue("q")
    out = {"queue": [q.name, str(q.lock_duration), q.max_delivery_count, str(q.default_message_time_to_live)]}
    adm.create_topic("t")
    adm.create_subscription("t", "all")
    adm.create_subscription("t", "red")
    adm.delete_rule("t", "red", "$Default")
    adm.create_rule("t", "red", "red", filter=SqlRuleFilter("color = 'red'"))
    out["queues"] = [x.name for x in adm.list_queues()]
    out["topics"] = [x.name for x in adm.list_topics()]
    out["subscriptions"] = sorted(x.name for x in adm.list_subscriptions("t"))
    # A page at a time, as for more than 100 entities: the SDK follows the
    # feed's next link.
    out["subscriptionsByOne"] = [x.name for x in adm.list_subscriptions("t", max_page_size=1)]
    out["rules"] = [[x.name, x.filter.sql_expression] for x in adm.list_rules("t", "red")]
    with client() as c:
        with c.get_topic_sender("t") as s:
            s.send_messages(ServiceBusMessage("red one", application_properties={"color": "red"}))
            s.send_messages(ServiceBusMessage("blue one", application_properties={"color": "blue"}))
            s.send_messages(ServiceBusMessage("q one"))
        with c.get_queue_sender("q") as s:
            s.send_messages(ServiceBusMessage("q one"))
    runtime = {}
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        runtime = {
            "all": adm.get_subscription_runtime_properties("t", "all").active_message_count,
            "red": adm.get_subscription_runtime_properties("t", "red").active_message_count,
            "q": adm.get_queue_runtime_properties("q").active_message_count,
            "topicSubscriptions": adm.get_topic_runtime_properties("t").subscription_count,
        }
        if runtime == {"all": 3, "red": 1, "q": 1, "topicSubscriptions": 2}:
            break
        time.sleep(0.02)
    out["runtime"] = runtime
    out["queuesRuntime"] = [[x.name, x.active_message_count] for x in adm.list_queues_runtime_properties()]
    with client() as c:
        with c.get_subscription_receiver("t", "red") as r:
            out["red"] = [body(m) for m in receive(r, 1)]
    adm.delete_subscription("t", "red")
    adm.delete_topic("t")
    adm.delete_queue("q")
    out["afterDelete"] = [len(list(adm.list_queues())), len(list(adm.list_topics()))]
    out["getMissing"] = error_name(lambda: adm.get_queue("q"))
    return out


SCENARIOS = {f.__name__: f for f in (settle, peek_schedule, renew_lock, ttl_dead_letter, expiry_properties, sessions, administration)}


def main(name):
    if name.startswith("aio_"):
        import asyncio

        import scenarios_aio

        out = asyncio.run(scenarios_aio.SCENARIOS[name[4:]]())
    else:
        out = SCENARIOS[name]()
    out["scenario"] = name
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])

"""Scenarios that drive lapse with Debian's azure-servicebus 7.8.2 (on uamqp),
which has no emulator support: it dials AMQPS on port 5671 and checks the
certificate, and its administration client builds https:// URLs.

    python3 servicebus.py SCENARIO

Environment: SERVICEBUS_CONNECTION_STRING (the service's, without
UseDevelopmentEmulator; its endpoint names the administration port, which
the AMQP client ignores), LAPSE_CERT (lapse's certificate, passed as
connection_verify), REQUESTS_CA_BUNDLE (the same, for the administration
client's requests), LAPSE_CONTROL_URL (lapse's control API, to move its
clock). Each scenario prints one JSON line that servicebus_python_test.go
checks.
"""

import datetime
import json
import os
import sys
import urllib.request

from azure.servicebus import (
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.management import ServiceBusAdministrationClient

CONN = os.environ["SERVICEBUS_CONNECTION_STRING"]
CERT = os.environ["LAPSE_CERT"]
CONTROL = os.environ["LAPSE_CONTROL_URL"]


def client():
    return ServiceBusClient.from_connection_string(CONN, connection_verify=CERT)


def session_client(**kw):
    """A client whose endpoint has no port. azure-servicebus 7.8.2 takes a
    session receiver's session id and lock from the attach reply only when
    the reply's source address is its own entity URI, with the endpoint's
    port, while uamqp leaves the port out of the address it sends; without
    a port both agree (and the AMQP client dials 5671 either way)."""
    import re

    conn = re.sub(r"(Endpoint=sb://[^/;:]+):\d+", r"\1", CONN)
    return ServiceBusClient.from_connection_string(conn, connection_verify=CERT, **kw)


def admin():
    return ServiceBusAdministrationClient.from_connection_string(CONN)


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


def receive(receiver, n):
    """Receives n messages; lapse has them all, so no wait is long."""
    got = []
    for _ in range(20):
        got += receiver.receive_messages(max_message_count=n - len(got), max_wait_time=1)
        if len(got) >= n:
            break
    return got


def counts(adm, queue, want):
    """The queue's [active, dead-lettered] counts once they are want, or
    after 5 s: a settlement on a receive link is not acknowledged, so an
    administration request right after it may overtake it."""
    import time

    deadline = time.monotonic() + 5
    while True:
        p = adm.get_queue_runtime_properties(queue)
        got = [p.active_message_count, p.dead_letter_message_count]
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def body(msg):
    return b"".join(msg.body).decode()


def is_guid(s):
    import uuid

    try:
        uuid.UUID(str(s))
        return True
    except ValueError:
        return False


def send_receive_settle():
    adm = admin()
    adm.create_queue("orders", lock_duration=datetime.timedelta(seconds=30), max_delivery_count=5)
    with client() as c:
        with c.get_queue_sender("orders") as s:
            s.send_messages(ServiceBusMessage("one", message_id="id-1", application_properties={"color": "red"}))
            s.send_messages([ServiceBusMessage("two"), ServiceBusMessage("three")])
        with c.get_queue_receiver("orders", max_wait_time=5) as r:
            msgs = receive(r, 3)
            first = {body(m): m for m in msgs}
            out = {
                "bodies": sorted(first),
                "messageId": first["one"].message_id,
                "color": (first["one"].application_properties or {}).get(b"color", b"").decode(),
                "otherIdsAreGUIDs": all(is_guid(first[b].message_id) for b in ("two", "three")),
                "deliveryCounts": sorted(m.delivery_count for m in msgs),
                "locked": all(m.lock_token and m.locked_until_utc for m in msgs),
                "sequenceNumbers": sorted(m.sequence_number for m in msgs),
            }
            r.complete_message(first["one"])
            r.abandon_message(first["two"])
            r.dead_letter_message(first["three"], reason="Rejected", error_description="not today")
            again = receive(r, 1)
            out["redelivered"] = [body(m) for m in again]
            out["redeliveryCount"] = again[0].delivery_count if again else None
            for m in again:
                r.complete_message(m)
        with c.get_queue_receiver("orders", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=5) as d:
            dead = receive(d, 1)
            out["deadLettered"] = [[body(m), m.dead_letter_reason, m.dead_letter_error_description] for m in dead]
            for m in dead:
                d.complete_message(m)
    out["left"] = counts(adm, "orders", [0, 0])
    # A link to an entity that does not exist is refused: the sender and
    # the receiver both get the error (azure-servicebus 7.8.2 raises the
    # link's amqp:not-found as a communication error, with its text).
    from azure.servicebus.exceptions import ServiceBusError
    with ServiceBusClient.from_connection_string(CONN, connection_verify=CERT, retry_total=0) as c:
        try:
            with c.get_queue_sender("nope") as s:
                s.send_messages(ServiceBusMessage("lost"))
            out["missingSend"] = "sent"
        except ServiceBusError as e:
            out["missingSend"] = type(e).__name__ + ": " + str(e)
        try:
            with c.get_queue_receiver("nope", max_wait_time=2) as r:
                r.receive_messages(max_wait_time=1)
            out["missingReceive"] = "received"
        except ServiceBusError as e:
            out["missingReceive"] = type(e).__name__
    return out


def peek():
    admin().create_queue("peeked")
    with client() as c:
        with c.get_queue_sender("peeked") as s:
            s.send_messages([ServiceBusMessage("a"), ServiceBusMessage("b"), ServiceBusMessage("c")])
        with c.get_queue_receiver("peeked", max_wait_time=5) as r:
            all3 = r.peek_messages(max_message_count=10)
            from2 = r.peek_messages(max_message_count=10, sequence_number=all3[1].sequence_number)
            return {
                "bodies": [body(m) for m in all3],
                "sequenceNumbers": [m.sequence_number for m in all3],
                "fromSecond": [body(m) for m in from2],
                "idsAreSet": all(m.message_id for m in all3),
                "noLocks": all(m.lock_token is None for m in all3),
            }


def defer():
    admin().create_queue("deferred")
    with client() as c:
        with c.get_queue_sender("deferred") as s:
            s.send_messages(ServiceBusMessage("later"))
        with c.get_queue_receiver("deferred", max_wait_time=5) as r:
            (m,) = receive(r, 1)
            seq = m.sequence_number
            r.defer_message(m)
            peeked = r.peek_messages(max_message_count=10)
            state = str(peeked[0].state) if peeked else None
            (d,) = r.receive_deferred_messages([seq])
            got = body(d)
            r.complete_message(d)
            return {"body": got, "peekedState": state, "afterComplete": len(r.peek_messages(max_message_count=10))}


def schedule():
    admin().create_queue("scheduled")
    with client() as c:
        with c.get_queue_sender("scheduled") as s:
            at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
            seqs = s.schedule_messages([ServiceBusMessage("keep"), ServiceBusMessage("cancel")], at)
            s.cancel_scheduled_messages(seqs[1])
        with c.get_queue_receiver("scheduled", max_wait_time=5) as r:
            before = [[body(m), str(m.state)] for m in r.peek_messages(max_message_count=10)]
            advance("6m")
            got = receive(r, 1)
            for m in got:
                r.complete_message(m)
            return {"sequenceNumbers": len(seqs), "before": before, "received": [body(m) for m in got]}


def renew_lock():
    admin().create_queue("renewed", lock_duration=datetime.timedelta(seconds=30))
    with client() as c:
        with c.get_queue_sender("renewed") as s:
            s.send_messages(ServiceBusMessage("held"))
        with c.get_queue_receiver("renewed", max_wait_time=5) as r:
            (m,) = receive(r, 1)
            first = m.locked_until_utc
            advance("20s")
            renewed = r.renew_message_lock(m)
            advance("20s")
            # 40 s after the receive, the renewed lock still holds.
            r.complete_message(m)
            return {
                "renewedBy": round((renewed - first).total_seconds()),
                "left": counts(admin(), "renewed", [0, 0])[0],
            }


def ttl_dead_letter():
    adm = admin()
    adm.create_queue(
        "expiring",
        default_message_time_to_live=datetime.timedelta(minutes=10),
        dead_lettering_on_message_expiration=True,
    )
    with client() as c:
        with c.get_queue_sender("expiring") as s:
            s.send_messages(ServiceBusMessage("by default"))
            s.send_messages(ServiceBusMessage("own ttl", time_to_live=datetime.timedelta(minutes=1)))
        advance("2m")
        mid = adm.get_queue_runtime_properties("expiring")
        advance("9m")
        with c.get_queue_receiver("expiring", sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=5) as d:
            dead = receive(d, 2)
            out = {
                "afterTwoMinutes": [mid.active_message_count, mid.dead_letter_message_count],
                "deadLettered": sorted([body(m), m.dead_letter_reason] for m in dead),
                "descriptions": sorted({m.dead_letter_error_description for m in dead}),
            }
            for m in dead:
                d.complete_message(m)
        with c.get_queue_receiver("expiring", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE, max_wait_time=1) as r:
            out["stillActive"] = len(r.receive_messages(max_message_count=10, max_wait_time=1))
        return out


def administration():
    from azure.servicebus.management import SqlRuleFilter

    adm = admin()
    adm.create_queue("q", default_message_time_to_live=datetime.timedelta(hours=1))
    q = adm.get_queue("q")
    q.default_message_time_to_live = datetime.timedelta(minutes=10)
    q.dead_lettering_on_message_expiration = True
    adm.update_queue(q)
    q = adm.get_queue("q")
    adm.create_topic("t")
    adm.create_subscription("t", "s", default_message_time_to_live=datetime.timedelta(minutes=5))
    adm.create_rule("t", "s", "red", filter=SqlRuleFilter("color = 'red'"))
    out = {
        "queue": [q.name, str(q.default_message_time_to_live), q.dead_lettering_on_message_expiration],
        "queues": [x.name for x in adm.list_queues()],
        "topics": [x.name for x in adm.list_topics()],
        "subscriptions": [x.name for x in adm.list_subscriptions("t")],
        "rules": sorted(r.name for r in adm.list_rules("t", "s")),
        "ruleFilter": adm.get_rule("t", "s", "red").filter.sql_expression,
    }
    with client() as c:
        with c.get_topic_sender("t") as s:
            s.send_messages([
                ServiceBusMessage("red one", application_properties={"color": "red"}),
                ServiceBusMessage("blue one", application_properties={"color": "blue"}),
            ])
        with c.get_subscription_receiver("t", "s", max_wait_time=5) as r:
            got = receive(r, 2)
            out["received"] = sorted(body(m) for m in got)
            for m in got:
                r.complete_message(m)
    adm.delete_rule("t", "s", "red")
    adm.delete_subscription("t", "s")
    adm.delete_topic("t")
    adm.delete_queue("q")
    out["afterDelete"] = [len(list(adm.list_queues())), len(list(adm.list_topics()))]
    return out


def sessions():
    """A queue that requires sessions, made by the administration client:
    a named session's messages in order, its state and lock renewal, the
    next available session, a held session refused, and the lock running
    out on lapse's clock."""
    from azure.servicebus import NEXT_AVAILABLE_SESSION
    from azure.servicebus.exceptions import ServiceBusError

    adm = admin()
    adm.create_queue("sq", requires_session=True, lock_duration=datetime.timedelta(minutes=1))
    out = {"requiresSession": adm.get_queue("sq").requires_session}
    with session_client() as c:
        with c.get_queue_sender("sq") as s:
            s.send_messages([
                ServiceBusMessage("a1", session_id="a"),
                ServiceBusMessage("b1", session_id="b"),
                ServiceBusMessage("a2", session_id="a"),
            ])
        out["active"] = adm.get_queue_runtime_properties("sq").active_message_count
        with c.get_queue_receiver("sq", session_id="a", max_wait_time=5) as r:
            start = r.session.locked_until_utc
            out["session"] = r.session.session_id
            out["peeked"] = [body(m) for m in r.peek_messages(max_message_count=10)]
            got = receive(r, 2)
            out["bodies"] = [body(m) for m in got]
            out["sessionIds"] = [m.session_id for m in got]
            for m in got:
                r.complete_message(m)
            try:
                with session_client(retry_total=0) as c2:
                    with c2.get_queue_receiver("sq", session_id="a", max_wait_time=5) as r2:
                        r2.receive_messages(max_wait_time=1)
                out["secondAccept"] = "accepted"
            except ServiceBusError as e:
                out["secondAccept"] = type(e).__name__
            r.session.set_state("step 1")
            out["state"] = r.session.get_state().decode()
            advance("30s")
            out["renewedBy"] = round((r.session.renew_lock() - start).total_seconds())
        with c.get_queue_receiver("sq", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as r:
            out["next"] = r.session.session_id
            got = receive(r, 1)
            out["nextBodies"] = [body(m) for m in got]
            out["firstDelivery"] = got[0].delivery_count
            advance("2m")  # the session lock runs out with b1 locked
        with c.get_queue_receiver("sq", session_id="b", max_wait_time=5) as r:
            got = receive(r, 1)
            out["again"] = [body(m) for m in got]
            out["secondDelivery"] = got[0].delivery_count
            r.complete_message(got[0])
            out["stateOfA"] = None
        with c.get_queue_receiver("sq", session_id="a", max_wait_time=5) as r:
            out["stateOfA"] = r.session.get_state().decode()
            r.session.set_state(None)
            out["cleared"] = r.session.get_state()
    out["left"] = counts(adm, "sq", [0, 0])
    return out


SCENARIOS = {
    f.__name__: f
    for f in (send_receive_settle, peek, defer, schedule, renew_lock, ttl_dead_letter, administration, sessions)
}

if __name__ == "__main__":
    name = sys.argv[1]
    result = SCENARIOS[name]()
    result["scenario"] = name
    print(json.dumps(result, sort_keys=True, default=str))

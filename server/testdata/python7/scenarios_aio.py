"""The scenarios of scenarios.py with azure-servicebus's asyncio clients
(azure.servicebus.aio, its administration client on aiohttp): the same
steps, the same JSON line. scenarios.py runs them as aio_NAME."""

import asyncio
import datetime
import time

from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.aio import AutoLockRenewer, ServiceBusClient
from azure.servicebus.aio.management import ServiceBusAdministrationClient
from azure.servicebus.management import SqlRuleFilter

from scenarios import CERT, CONN, advance, body, expiry_of, lapse_now


def client(**kw):
    return ServiceBusClient.from_connection_string(CONN, connection_verify=CERT, **kw)


def admin():
    return ServiceBusAdministrationClient.from_connection_string(CONN, connection_verify=CERT)


async def receive(receiver, n):
    got = []
    for _ in range(20):
        got += await receiver.receive_messages(max_message_count=n - len(got), max_wait_time=1)
        if len(got) >= n:
            break
    return got


async def counts(adm, queue, want):
    deadline = time.monotonic() + 5
    while True:
        p = await adm.get_queue_runtime_properties(queue)
        got = [p.active_message_count, p.dead_letter_message_count, p.scheduled_message_count]
        if got == want or time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.02)


async def error_name(coro):
    try:
        await coro
    except Exception as e:  # the type is what the scenario reports
        return type(e).__name__
    return None


async def settle():
    out = {}
    async with admin() as adm:
        await adm.create_queue("settle", max_delivery_count=5)
        async with client() as c:
            async with c.get_queue_sender("settle") as s:
                await s.send_messages(ServiceBusMessage("done", message_id="m-1", application_properties={"color": "red"}))
                await s.send_messages([ServiceBusMessage(b) for b in ("again", "later", "bad")])
            async with c.get_queue_receiver("settle") as r:
                msgs = {body(m): m for m in await receive(r, 4)}
                out["bodies"] = sorted(msgs)
                out["messageId"] = msgs["done"].message_id
                out["color"] = msgs["done"].application_properties[b"color"].decode()
                out["sequenceNumbers"] = sorted(m.sequence_number for m in msgs.values())
                out["deliveryCounts"] = sorted(m.delivery_count for m in msgs.values())
                await r.complete_message(msgs["done"])
                await r.abandon_message(msgs["again"])
                await r.defer_message(msgs["later"])
                await r.dead_letter_message(msgs["bad"], reason="not today", error_description="bad body")
                again = await receive(r, 1)
                out["again"] = [[body(m), m.delivery_count] for m in again]
                await r.complete_message(again[0])
                deferred = await r.receive_deferred_messages([msgs["later"].sequence_number])
                out["deferred"] = [[body(m), str(m.state)] for m in deferred]
                await r.complete_message(deferred[0])
            async with c.get_queue_receiver("settle", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
                dead = await receive(dlq, 1)
                out["deadLettered"] = [[body(m), m.dead_letter_reason, m.dead_letter_error_description] for m in dead]
                await dlq.complete_message(dead[0])
            out["left"] = await counts(adm, "settle", [0, 0, 0])
            out["missing"] = await error_name(c.get_queue_sender("nope").send_messages(ServiceBusMessage("x")))
            async with c.get_queue_sender("settle") as s:
                out["tooBig"] = await error_name(s.send_messages(ServiceBusMessage("x" * 300_000)))
    return out


async def peek_schedule():
    out = {}
    async with admin() as adm:
        await adm.create_queue("peek")
        async with client() as c:
            async with c.get_queue_sender("peek") as s:
                await s.send_messages([ServiceBusMessage(b) for b in ("a", "b", "c")])
                at = lapse_now() + datetime.timedelta(minutes=5)
                seqs = await s.schedule_messages([ServiceBusMessage("keep"), ServiceBusMessage("drop")], at)
                out["scheduled"] = len(seqs)
                await s.cancel_scheduled_messages(seqs[1])
            async with c.get_queue_receiver("peek") as r:
                peeked = await r.peek_messages(max_message_count=10)
                out["peeked"] = [[body(m), str(m.state)] for m in peeked]
                second = await r.peek_messages(max_message_count=10, sequence_number=peeked[1].sequence_number)
                out["fromSecond"] = [body(m) for m in second]
                out["noLocks"] = all(m.lock_token is None for m in peeked)
                for m in await receive(r, 3):
                    await r.complete_message(m)
                out["beforeTime"] = [body(m) for m in await r.receive_messages(max_message_count=1, max_wait_time=1)]
                advance("5m1s")
                due = await receive(r, 1)
                out["due"] = [body(m) for m in due]
                for m in due:
                    await r.complete_message(m)
            out["left"] = await counts(adm, "peek", [0, 0, 0])
    return out


async def renew_lock():
    out = {}
    async with admin() as adm:
        await adm.create_queue("renew", lock_duration=datetime.timedelta(seconds=10))
        async with client() as c:
            async with c.get_queue_sender("renew") as s:
                await s.send_messages([ServiceBusMessage(b) for b in ("manual", "auto", "lost")])
            async with c.get_queue_receiver("renew") as r:
                msgs = {body(m): m for m in await receive(r, 3)}
                first = msgs["manual"].locked_until_utc
                async with AutoLockRenewer() as renewer:
                    renewer.register(r, msgs["auto"], max_lock_renewal_duration=60)
                    for step in range(2):
                        before = msgs["auto"].locked_until_utc
                        advance("6s")
                        if step == 0:
                            renewed = await r.renew_message_lock(msgs["manual"])
                            out["renewedBy"] = round((renewed - first).total_seconds())
                        deadline = time.monotonic() + 10
                        while msgs["auto"].locked_until_utc <= before and time.monotonic() < deadline:
                            await asyncio.sleep(0.05)
                    out["autoRenewedBy"] = round((msgs["auto"].locked_until_utc - first).total_seconds())
                    await r.complete_message(msgs["auto"])
                await r.complete_message(msgs["manual"])
                out["lost"] = await error_name(r.complete_message(msgs["lost"]))
            out["left"] = await counts(adm, "renew", [1, 0, 0])
    return out


async def ttl_dead_letter():
    out = {}
    async with admin() as adm:
        await adm.create_queue(
            "ttl",
            default_message_time_to_live=datetime.timedelta(minutes=2),
            dead_lettering_on_message_expiration=True,
        )
        async with client() as c:
            async with c.get_queue_sender("ttl") as s:
                await s.send_messages(ServiceBusMessage("by default"))
                await s.send_messages(ServiceBusMessage("own ttl", time_to_live=datetime.timedelta(minutes=1)))
                await s.send_messages(ServiceBusMessage("long", time_to_live=datetime.timedelta(hours=1)))
            advance("1m30s")
            out["after90s"] = (await counts(adm, "ttl", [2, 1, 0]))[:2]
            advance("1m")
            out["after150s"] = (await counts(adm, "ttl", [0, 3, 0]))[:2]
            async with c.get_queue_receiver("ttl", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
                dead = await receive(dlq, 3)
                out["deadLettered"] = sorted([body(m), m.dead_letter_reason] for m in dead)
                for m in dead:
                    await dlq.complete_message(m)
    return out


async def expiry_properties():
    out = {}
    async with admin() as adm:
        await adm.create_queue("day", default_message_time_to_live=datetime.timedelta(days=1))
        await adm.create_queue("long", default_message_time_to_live=datetime.timedelta(days=60))
        await adm.create_queue("d")
        await adm.create_queue("once", max_delivery_count=1)
    async with client() as c:
        for q in ("day", "long"):
            async with c.get_queue_sender(q) as s:
                await s.send_messages(ServiceBusMessage(q))
            async with c.get_queue_receiver(q) as r:
                [peeked] = await r.peek_messages(1)
                [m] = await receive(r, 1)
                out[q] = expiry_of(peeked, m)
        async with c.get_queue_sender("d") as s:
            await s.send_messages(ServiceBusMessage("d"))
        async with c.get_queue_receiver("d") as r:
            [m] = await receive(r, 1)
            await r.defer_message(m)
            [peeked] = await r.peek_messages(1, sequence_number=m.sequence_number)
            [d] = await r.receive_deferred_messages([m.sequence_number])
            out["deferred"] = [m.delivery_count, peeked.delivery_count, d.delivery_count]
        async with c.get_queue_sender("once") as s:
            await s.send_messages(ServiceBusMessage("x"))
        async with c.get_queue_receiver("once") as r:
            [m] = await receive(r, 1)
            await r.defer_message(m)
        async with c.get_queue_receiver("once", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = await receive(dlq, 1)
            out["deferAtTheLimit"] = dead[0].dead_letter_reason if dead else "not dead-lettered"
    return out


async def sessions():
    out = {}
    async with admin() as adm:
        await adm.create_queue("sess", requires_session=True, lock_duration=datetime.timedelta(seconds=30))
        out["requiresSession"] = (await adm.get_queue("sess")).requires_session
    async with client() as c:
        async with c.get_queue_sender("sess") as s:
            await s.send_messages([ServiceBusMessage(b, session_id=b[0]) for b in ("a1", "a2", "b1")])
        async with c.get_queue_receiver("sess", session_id="a") as r:
            out["session"] = r.session.session_id
            got = await receive(r, 2)
            out["bodies"] = [body(m) for m in got]
            async with client(retry_total=0) as c2:
                out["secondAccept"] = await error_name(c2.get_queue_receiver("sess", session_id="a").__aenter__())
            await r.session.set_state("step 1")
            out["state"] = (await r.session.get_state()).decode()
            first = r.session.locked_until_utc
            advance("20s")
            out["renewedBy"] = round((await r.session.renew_lock() - first).total_seconds())
            for m in got:
                await r.complete_message(m)
        async with c.get_queue_receiver("sess", session_id=NEXT_AVAILABLE_SESSION) as r:
            out["next"] = r.session.session_id
            got = await receive(r, 1)
            out["nextBodies"] = [[body(m), m.delivery_count] for m in got]
            advance("31s")
            out["lockLost"] = await error_name(r.complete_message(got[0]))
        async with c.get_queue_receiver("sess", session_id="b") as r:
            out["again"] = [[body(m), m.delivery_count] for m in await receive(r, 1)]
        async with c.get_queue_receiver("sess", session_id="a") as r:
            out["stateOfA"] = (await r.session.get_state()).decode()
            await r.session.set_state(None)
            out["cleared"] = await r.session.get_state()
    return out


async def administration():
    out = {}
    async with admin() as adm:
        await adm.create_queue("q", lock_duration=datetime.timedelta(seconds=45))
        q = await adm.get_queue("q")
        q.max_delivery_count = 3
        q.default_message_time_to_live = datetime.timedelta(hours=1)
        await adm.update_queue(q)
        q = await adm.get_queue("q")
        out["queue"] = [q.name, str(q.lock_duration), q.max_delivery_count, str(q.default_message_time_to_live)]
        await adm.create_topic("t")
        await adm.create_subscription("t", "all")
        await adm.create_subscription("t", "red")
        await adm.delete_rule("t", "red", "$Default")
        await adm.create_rule("t", "red", "red", filter=SqlRuleFilter("color = 'red'"))
        out["queues"] = [x.name async for x in adm.list_queues()]
        out["topics"] = [x.name async for x in adm.list_topics()]
        out["subscriptions"] = sorted([x.name async for x in adm.list_subscriptions("t")])
        out["subscriptionsByOne"] = [x.name async for x in adm.list_subscriptions("t", max_page_size=1)]
        out["rules"] = [[x.name, x.filter.sql_expression] async for x in adm.list_rules("t", "red")]
        async with client() as c:
            async with c.get_topic_sender("t") as s:
                await s.send_messages(ServiceBusMessage("red one", application_properties={"color": "red"}))
                await s.send_messages(ServiceBusMessage("blue one", application_properties={"color": "blue"}))
                await s.send_messages(ServiceBusMessage("q one"))
            async with c.get_queue_sender("q") as s:
                await s.send_messages(ServiceBusMessage("q one"))
        runtime = {}
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            runtime = {
                "all": (await adm.get_subscription_runtime_properties("t", "all")).active_message_count,
                "red": (await adm.get_subscription_runtime_properties("t", "red")).active_message_count,
                "q": (await adm.get_queue_runtime_properties("q")).active_message_count,
                "topicSubscriptions": (await adm.get_topic_runtime_properties("t")).subscription_count,
            }
            if runtime == {"all": 3, "red": 1, "q": 1, "topicSubscriptions": 2}:
                break
            await asyncio.sleep(0.02)
        out["runtime"] = runtime
        out["queuesRuntime"] = [[x.name, x.active_message_count] async for x in adm.list_queues_runtime_properties()]
        async with client() as c:
            async with c.get_subscription_receiver("t", "red") as r:
                out["red"] = [body(m) for m in await receive(r, 1)]
        await adm.delete_subscription("t", "red")
        await adm.delete_topic("t")
        await adm.delete_queue("q")
        out["afterDelete"] = [len([x async for x in adm.list_queues()]), len([x async for x in adm.list_topics()])]
        out["getMissing"] = await error_name(adm.get_queue("q"))
    return out


SCENARIOS = {f.__name__: f for f in (settle, peek_schedule, renew_lock, ttl_dead_letter, expiry_properties, sessions, administration)}

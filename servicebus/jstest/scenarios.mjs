// scenarios.mjs drives lapse's Service Bus front-end with the official
// @azure/service-bus SDK, unmodified. servicebus/js_test.go runs it once per
// scenario against a fresh server and checks what it prints.
//
//   node scenarios.mjs SCENARIO... [--connection-string S] [--control URL]
//
// The connection string comes from --connection-string or
// SERVICEBUS_CONNECTION_STRING; the control URL (the Go test's HTTP server
// whose POST /advance?by=60s moves the server's frozen clock) from --control
// or LAPSE_CONTROL_URL. Each scenario prints one JSON line,
// {"scenario": NAME, ...what it saw}; the first failure ends the run with its
// error on stderr and exit status 1.
//
// Entities, created by the Go test:
//   q     queue, lock duration 1 min
//   dlx   queue with DeadLetteringOnMessageExpiration
//   t     topic with subscription s
//   sq    queue that requires sessions, lock duration 1 min
//   day   queue with a one-day default TTL, long one with 60 days
//   once  queue with MaxDeliveryCount 1

import { ServiceBusClient } from "@azure/service-bus";
import Long from "long";

// Locks matter here: no background renew-lock requests.
const peekLock = { receiveMode: "peekLock", maxAutoLockRenewalDurationInMs: 0 };

function args(argv) {
  const out = { names: [], connectionString: process.env.SERVICEBUS_CONNECTION_STRING, control: process.env.LAPSE_CONTROL_URL };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--connection-string") out.connectionString = argv[++i];
    else if (argv[i] === "--control") out.control = argv[++i];
    else out.names.push(argv[i]);
  }
  return out;
}

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

const text = (m) => (typeof m.body === "string" ? m.body : JSON.stringify(m.body));
const seq = (m) => (m.sequenceNumber === undefined ? null : m.sequenceNumber.toNumber());

// receive collects up to n messages, asking again until n came or a
// receiveMessages call returns none.
async function receive(r, n, maxWaitTimeInMs = 3000) {
  const out = [];
  while (out.length < n) {
    const got = await r.receiveMessages(n - out.length, { maxWaitTimeInMs });
    if (got.length === 0) break;
    out.push(...got);
  }
  return out;
}

async function advance(control, by) {
  if (!control) throw new Error("no control URL (--control or LAPSE_CONTROL_URL)");
  const res = await fetch(`${control}/advance?by=${encodeURIComponent(by)}`, { method: "POST" });
  if (!res.ok) throw new Error(`advance ${by}: HTTP ${res.status} ${await res.text()}`);
}

const scenarios = {
  // send + receiveMessages (peek-lock) + completeMessage. receiveMessages
  // asks for more than there is, so it ends with a drain that the server
  // must answer.
  async "peek-lock"(sb) {
    await sb.createSender("q").sendMessages({ body: "hello", messageId: "m1", applicationProperties: { color: "red" } });
    const r = sb.createReceiver("q", peekLock);
    const start = Date.now();
    const [m] = await r.receiveMessages(10, { maxWaitTimeInMs: 5000 });
    const elapsedMs = Date.now() - start;
    check(m, "a message arrives");
    const out = {
      body: text(m), messageId: m.messageId, color: m.applicationProperties?.color,
      sequenceNumber: seq(m), deliveryCount: m.deliveryCount, hasLockToken: !!m.lockToken,
      lockedUntil: m.lockedUntilUtc?.toISOString(), enqueued: m.enqueuedTimeUtc?.toISOString(), elapsedMs,
    };
    await r.completeMessage(m);
    out.afterComplete = (await receive(r, 1, 500)).length;
    out.peekAfterComplete = (await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).length;
    return out;
  },

  async "receive-and-delete"(sb) {
    await sb.createSender("q").sendMessages([{ body: "a" }, { body: "b" }]);
    const r = sb.createReceiver("q", { receiveMode: "receiveAndDelete" });
    const got = await receive(r, 2);
    return {
      bodies: got.map(text),
      lockTokens: got.filter((m) => m.lockToken).length,
      peekAfter: (await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).length,
    };
  },

  // peekMessages reads statusCode (camelCase) to tell 204 from 200.
  async peek(sb) {
    await sb.createSender("q").sendMessages([{ body: "p1" }, { body: "p2" }, { body: "p3" }]);
    const r = sb.createReceiver("q", peekLock);
    const all = await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) });
    const fromTwo = await r.peekMessages(1, { fromSequenceNumber: Long.fromNumber(2) });
    const past = await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(100) });
    return {
      bodies: all.map(text), sequenceNumbers: all.map(seq), states: all.map((m) => m.state),
      // the header's delivery-count as it came, null when it did not
      deliveryCounts: all.map((m) => m.deliveryCount ?? null),
      fromTwo: fromTwo.map(text), past: past.length,
      stillThere: (await receive(r, 3)).length,
    };
  },

  async schedule(sb) {
    const s = sb.createSender("q");
    const at = new Date("2100-01-01T00:00:00Z");
    const seqs = await s.scheduleMessages([{ body: "later" }, { body: "much later" }], at);
    const r = sb.createReceiver("q", peekLock);
    const before = await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) });
    await s.cancelScheduledMessages(seqs[0]);
    const after = await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) });
    return {
      sequenceNumbers: seqs.map((x) => x.toNumber()),
      before: before.map((m) => ({ body: text(m), state: m.state, scheduled: m.scheduledEnqueueTimeUtc?.toISOString() })),
      after: after.map(text),
      received: (await receive(r, 1, 500)).length,
    };
  },

  // Deferred messages come back over $management with their lock token in
  // the response map's lock-token.
  async defer(sb) {
    await sb.createSender("q").sendMessages({ body: "deferred" });
    const r = sb.createReceiver("q", peekLock);
    const [m] = await receive(r, 1);
    check(m, "a message arrives");
    await r.deferMessage(m);
    const again = await receive(r, 1, 500);
    const [d] = await r.receiveDeferredMessages(m.sequenceNumber);
    check(d, "the deferred message comes back");
    const out = { body: text(d), state: d.state, sequenceNumber: seq(d), hasLockToken: !!d.lockToken, receivedWhileDeferred: again.length };
    await r.completeMessage(d);
    // Gone: the service answers message-not-found.
    out.afterComplete = await r.receiveDeferredMessages(m.sequenceNumber).then((got) => `${got.length} messages`, (err) => err.code);
    out.peekAfterComplete = (await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).length;
    return out;
  },

  // Issue 31.2: what the message carries. day: a one-day default TTL;
  // long: a 60-day one, beyond the header's 32 bits of milliseconds; once:
  // MaxDeliveryCount 1, where a defer dead-letters.
  async "expiry-properties"(sb) {
    const out = {};
    for (const q of ["day", "long"]) {
      await sb.createSender(q).sendMessages({ body: q });
      const r = sb.createReceiver(q, peekLock);
      const [p] = await r.peekMessages(1, { fromSequenceNumber: Long.fromNumber(1) });
      const [m] = await receive(r, 1);
      check(p && m, `a message of ${q}`);
      out[q] = {
        peekTimeToLive: p.timeToLive ?? null, timeToLive: m.timeToLive ?? null,
        expiresAfterEnqueuedMs: m.expiresAtUtc.getTime() - m.enqueuedTimeUtc.getTime(),
        creationTime: m._rawAmqpMessage.properties?.creationTime ?? null, absoluteExpiryTime: m._rawAmqpMessage.properties?.absoluteExpiryTime ?? null,
      };
    }
    const r = sb.createReceiver("q", peekLock);
    await sb.createSender("q").sendMessages({ body: "d" });
    const [m] = await receive(r, 1);
    check(m, "a message of q");
    await r.deferMessage(m);
    const [p] = await r.peekMessages(1, { fromSequenceNumber: Long.fromNumber(1) });
    const [d] = await r.receiveDeferredMessages(m.sequenceNumber);
    out.deferred = { received: m.deliveryCount, peeked: p.deliveryCount, receivedDeferred: d.deliveryCount };
    await sb.createSender("once").sendMessages({ body: "x" });
    const once = sb.createReceiver("once", peekLock);
    const [x] = await receive(once, 1);
    check(x, "a message of once");
    await once.deferMessage(x);
    const [dead] = await receive(sb.createReceiver("once", { ...peekLock, subQueueType: "deadLetter" }), 1);
    out.deferAtTheLimit = dead ? dead.deadLetterReason : "not dead-lettered";
    return out;
  },

  async "dead-letter"(sb) {
    await sb.createSender("q").sendMessages({ body: "poison" });
    const r = sb.createReceiver("q", peekLock);
    const [m] = await receive(r, 1);
    check(m, "a message arrives");
    await r.deadLetterMessage(m, { deadLetterReason: "Broken", deadLetterErrorDescription: "cannot parse" });
    const dlq = sb.createReceiver("q", { ...peekLock, subQueueType: "deadLetter" });
    const [d] = await receive(dlq, 1);
    check(d, "the dead-letter receiver gets the message");
    await dlq.completeMessage(d);
    return {
      body: text(d), deadLetterReason: d.deadLetterReason, deadLetterErrorDescription: d.deadLetterErrorDescription,
      mainQueue: (await receive(r, 1, 500)).length,
    };
  },

  async abandon(sb) {
    await sb.createSender("q").sendMessages({ body: "again" });
    const r = sb.createReceiver("q", peekLock);
    const [m] = await receive(r, 1);
    check(m, "a message arrives");
    await r.abandonMessage(m);
    const [m2] = await receive(r, 1);
    check(m2, "the abandoned message comes back");
    await r.completeMessage(m2);
    return { body: text(m2), first: m.deliveryCount, second: m2.deliveryCount, sameSequence: seq(m) === seq(m2) };
  },

  // TTL expiry on the server's clock, which only the Go test moves.
  async "ttl-expiry"(sb, { control }) {
    await sb.createSender("dlx").sendMessages({ body: "short-lived", timeToLive: 60000 });
    const r = sb.createReceiver("dlx", peekLock);
    const dlq = sb.createReceiver("dlx", { ...peekLock, subQueueType: "deadLetter" });
    const dlqBefore = (await dlq.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).length;
    const before = (await r.peekMessages(10, { fromSequenceNumber: Long.fromNumber(1) })).map((m) => ({
      body: text(m), timeToLive: m.timeToLive,
    }));
    await advance(control, "60s");
    const [d] = await receive(dlq, 1);
    check(d, "the expired message reaches the dead-letter queue");
    await dlq.completeMessage(d);
    return {
      before, dlqBefore, body: text(d), deadLetterReason: d.deadLetterReason,
      mainAfter: (await receive(r, 1, 500)).length,
    };
  },

  async topic(sb) {
    await sb.createSender("t").sendMessages({ body: "to all", subject: "news" });
    const r = sb.createReceiver("t", "s", peekLock);
    const [m] = await receive(r, 1);
    check(m, "the subscription gets the message");
    await r.completeMessage(m);
    return { body: text(m), subject: m.subject, afterComplete: (await receive(r, 1, 500)).length };
  },

  // The rule manager over $management: add-rule, enumerate-rules,
  // remove-rule, and the rules at work on what the subscription gets.
  async rules(sb) {
    const rm = sb.createRuleManager("t", "s");
    const list = async () => {
      const out = [];
      // listRules yields one undefined for an empty first page.
      for await (const rule of rm.listRules()) if (rule) out.push(rule);
      // The service's order is not documented.
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    };
    const initial = await list();
    await rm.createRule("red", { sqlExpression: "color = 'red'" }, { sqlExpression: "SET quantity = quantity * 2" });
    await rm.createRule("corr", { correlationId: "c1", subject: "s1", applicationProperties: { k: "v" } });
    const created = await list();
    await rm.deleteRule("$Default");
    await rm.deleteRule("corr");
    await sb.createSender("t").sendMessages([
      { body: "blue", applicationProperties: { color: "blue", quantity: 1 } },
      { body: "red", applicationProperties: { color: "red", quantity: 2 } },
    ]);
    const r = sb.createReceiver("t", "s", peekLock);
    const got = await receive(r, 2, 1000);
    for (const m of got) await r.completeMessage(m);
    await rm.deleteRule("red");
    return {
      initial,
      created,
      received: got.map((m) => ({ body: text(m), quantity: m.applicationProperties?.quantity })),
      afterDelete: await list(),
    };
  },

  // createMessageBatch and sendMessages, with the batch limit the server
  // gave in the sender's attach.
  async batch(sb) {
    const s = sb.createSender("q");
    const b = await s.createMessageBatch();
    for (let i = 0; i < 5; i++) check(b.tryAddMessage({ body: `b${i}` }), `batch takes message ${i}`);
    const big = b.tryAddMessage({ body: "x".repeat(b.maxSizeInBytes + 1) });
    await s.sendMessages(b);
    await s.sendMessages([{ body: "array1" }, { body: "array2" }]);
    const r = sb.createReceiver("q", { receiveMode: "receiveAndDelete" });
    const got = await receive(r, 7);
    return { maxSizeInBytes: b.maxSizeInBytes, count: b.count, tookOversized: big, bodies: got.map(text) };
  },
};

// sessionOpts are a session receiver's options: peek-lock, no background
// renewal of the session lock.
const sessionOpts = { receiveMode: "peekLock", maxAutoLockRenewalDurationInMs: 0 };

// errorOf runs f and returns the code of the ServiceBusError it throws, or
// "none".
async function errorOf(f) {
  try {
    await f();
    return "none";
  } catch (err) {
    return err.code ?? err.name ?? String(err);
  }
}

Object.assign(scenarios, {
  // acceptSession: a named session, its messages in send order only, its
  // lock and state; a second accept of it fails while the first holds it;
  // closing the receiver releases it.
  async "session-accept"(sb, { connectionString, control }) {
    await sb.createSender("sq").sendMessages([
      { body: "a1", sessionId: "a" }, { body: "b1", sessionId: "b" }, { body: "a2", sessionId: "a" },
    ]);
    const r = await sb.acceptSession("sq", "a", sessionOpts);
    const out = { sessionId: r.sessionId, lockedUntil: r.sessionLockedUntilUtc?.toISOString() };
    const got = await receive(r, 2, 1000);
    out.bodies = got.map(text);
    out.sessionIds = got.map((m) => m.sessionId);
    for (const m of got) await r.completeMessage(m);
    const other = new ServiceBusClient(connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 5000 } });
    try {
      out.secondAccept = await errorOf(() => other.acceptSession("sq", "a", sessionOpts));
      await r.setSessionState("step 1");
      out.state = await r.getSessionState();
      await advance(control, "30s");
      out.renewedUntil = (await r.renewSessionLock()).toISOString();
      await r.close();
      const again = await other.acceptSession("sq", "a", sessionOpts);
      out.stateAfterClose = await again.getSessionState();
      await again.setSessionState(null);
      out.stateCleared = await again.getSessionState();
      await again.close();
    } finally {
      await other.close();
    }
    return out;
  },

  // acceptNextSession: the session with a message that is not held; with
  // none, the service's timeout.
  async "session-next"(sb, { connectionString }) {
    await sb.createSender("sq").sendMessages([{ body: "a1", sessionId: "a" }, { body: "b1", sessionId: "b" }]);
    const held = await sb.acceptSession("sq", "a", sessionOpts);
    const next = await sb.acceptNextSession("sq", sessionOpts);
    const out = { next: next.sessionId, bodies: (await receive(next, 5, 1000)).map(text) };
    const quick = new ServiceBusClient(connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 1500 } });
    try {
      const start = Date.now();
      out.none = await errorOf(() => quick.acceptNextSession("sq", sessionOpts));
      out.noneWithinTimeout = Date.now() - start < 5000;
    } finally {
      await quick.close();
    }
    await held.close();
    await next.close();
    return out;
  },

  // subscribe on the next session: its messages, in order, completed as
  // they are processed.
  async "session-subscribe"(sb) {
    await sb.createSender("sq").sendMessages([1, 2, 3].map((i) => ({ body: `s${i}`, sessionId: "s" })));
    const r = await sb.acceptNextSession("sq", sessionOpts);
    const bodies = [];
    await new Promise((resolve, reject) => {
      const sub = r.subscribe({
        async processMessage(m) {
          bodies.push(text(m));
          if (bodies.length === 3) sub.close().then(resolve, reject);
        },
        async processError(args) {
          reject(args.error);
        },
      });
    });
    await r.close();
    const again = await sb.acceptSession("sq", "s", sessionOpts);
    const after = (await receive(again, 3, 500)).map(text);
    await again.close();
    return { session: r.sessionId, bodies, after };
  },

  // the session lock runs out on the server's clock: settling fails with
  // SessionLockLost, the next receiver gets the message a second time.
  // A link to an entity that does not exist is refused (an attach with
  // neither source nor target, then a detach with amqp:not-found): the
  // sender and the receiver both get the error, and the client goes on.
  async "missing-entity"(sb) {
    const code = (p) => p.then(() => "no error", (err) => err.code);
    const send = await code(sb.createSender("nope").sendMessages({ body: "lost" }));
    const receive = await code(sb.createReceiver("nope", peekLock).receiveMessages(1, { maxWaitTimeInMs: 2000 }));
    await sb.createSender("q").sendMessages({ body: "still here" });
    const after = await sb.createReceiver("q", { receiveMode: "receiveAndDelete" }).receiveMessages(1, { maxWaitTimeInMs: 5000 });
    return { send, receive, after: after.map(text) };
  },

  async "session-lock-lost"(sb, { control }) {
    await sb.createSender("sq").sendMessages({ body: "l1", sessionId: "l" });
    const r = await sb.acceptSession("sq", "l", sessionOpts);
    const [m] = await receive(r, 1, 1000);
    check(m, "a message arrives");
    const first = m.deliveryCount;
    await advance(control, "61s");
    // the server detaches the receiver when the lock runs out; wait until
    // the SDK has seen it
    for (let i = 0; i < 100 && !r.isClosed; i++) await new Promise((res) => setTimeout(res, 50));
    const closed = r.isClosed;
    const complete = await errorOf(() => r.completeMessage(m));
    const again = await sb.acceptSession("sq", "l", sessionOpts);
    const [m2] = await receive(again, 1, 1000);
    check(m2, "the message comes again");
    await again.completeMessage(m2);
    await again.close();
    return { first, closed, complete, second: m2.deliveryCount, body: text(m2) };
  },
});

async function main() {
  const a = args(process.argv.slice(2));
  if (!a.connectionString || a.names.length === 0) {
    console.error(`usage: node scenarios.mjs SCENARIO... [--connection-string S] [--control URL]\nscenarios: ${Object.keys(scenarios).join(", ")}`);
    process.exit(2);
  }
  for (const name of a.names) {
    const run = scenarios[name];
    if (!run) throw new Error(`unknown scenario ${JSON.stringify(name)}`);
    // No retries: an error from the server should fail the scenario now.
    const sb = new ServiceBusClient(a.connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 15000 } });
    try {
      const result = await run(sb, a);
      console.log(JSON.stringify({ scenario: name, ...result }));
    } finally {
      await sb.close();
    }
  }
}

main().catch((err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
});

// scenarios.mjs drives lapse's Cosmos DB front-end with the official
// @azure/cosmos SDK, unmodified: the endpoint and the emulator's key as they
// are, the default connection policy. cosmos/js_test.go runs it once per
// scenario against a fresh server and checks what it prints.
//
//   node scenarios.mjs SCENARIO... [--endpoint URL] [--key KEY] [--control URL]
//
// The endpoint (plain http://host:port/) comes from --endpoint or
// COSMOS_ENDPOINT, the key from --key or COSMOS_KEY, and the control URL
// (the Go test's HTTP server whose POST /advance?by=60s moves the server's
// frozen clock) from --control or LAPSE_CONTROL_URL. Each scenario prints
// one JSON line, {"scenario": NAME, ...what it saw}; the first failure ends
// the run with its error on stderr and exit status 1.
//
// Every scenario starts on an empty account and makes what it needs.

import { createHash } from "node:crypto";
import https from "node:https";
import {
  BulkOperationType,
  ChangeFeedMode,
  ChangeFeedStartFrom,
  CosmosClient,
  PartitionKeyDefinitionVersion,
  PartitionKeyKind,
  PermissionMode,
} from "@azure/cosmos";

function args(argv) {
  const out = {
    names: [],
    endpoint: process.env.COSMOS_ENDPOINT,
    key: process.env.COSMOS_KEY,
    control: process.env.LAPSE_CONTROL_URL,
  };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--endpoint") out.endpoint = argv[++i];
    else if (argv[i] === "--key") out.key = argv[++i];
    else if (argv[i] === "--control") out.control = argv[++i];
    else out.names.push(argv[i]);
  }
  return out;
}

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function advance(control, by) {
  if (!control) throw new Error("no control URL (--control or LAPSE_CONTROL_URL)");
  const res = await fetch(`${control}/advance?by=${encodeURIComponent(by)}`, { method: "POST" });
  if (!res.ok) throw new Error(`advance ${by}: HTTP ${res.status} ${await res.text()}`);
}

// failure runs f and returns the HTTP status of the error it throws, or 0
// when it throws none.
async function failure(f) {
  try {
    await f();
  } catch (err) {
    if (typeof err?.code !== "number") throw err;
    return err.code;
  }
  return 0;
}

const ids = (rows) => rows.map((r) => r.id);
const sorted = (xs) => [...xs].sort();

// pkContainer creates database db and container c in it with partition key
// /pk and the properties given, and returns the container.
// hybridDocs and hybridQueries are the items and queries of the
// "hybrid-search" scenario; the Go test (and the Python scenario) run the
// same queries over the same items whole, in lapse, for the answer.
const hybridDocs = [
  { text: "swim lake morning cold", v: [1, 0, 0] },
  { text: "run river swim evening easy pace", v: [0.9, 0.1, 0] },
  { text: "marathon run training plan beginners weekly schedule", v: [0, 1, 0] },
  { text: "swim swim swim lake warm", v: [0.7, 0.7, 0] },
  { text: "cycling hills", v: [0, 0, 1] },
  { text: "trail run hills rain mud shoes wet feet", v: [0.2, 0.9, 0.1] },
  { text: "pool opens early morning swim lessons kids parents coaches", v: [0.8, 0.2, 0.3] },
  { text: "nothing", v: [0.1, 0.1, 0.9] },
  { text: "run swim cycle triathlon race day transition bikes helmets goggles", v: [0.5, 0.5, 0.5] },
  { text: "river runs lake", v: [0.6, 0, 0.4] },
  { v: [1, 1, 0] },
  { text: "long swim across bay currents tides cold water safety boats buoys", v: [0.95, 0.05, 0.1] },
  { text: "morning run dog park leash", v: [0.1, 0.95, 0] },
  { text: "lake house rent summer weekends family" },
];
const hybridQueries = {
  score: 'SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, "swim", "lake")',
  scoreOffset: 'SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ["run"]) OFFSET 1 LIMIT 3',
  rrf: 'SELECT TOP 4 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), FullTextScore(c.text, "lake"))',
  weighted: 'SELECT TOP 4 c.id FROM c WHERE c.id != "h00" ORDER BY RANK RRF(FullTextScore(c.text, "run"), FullTextScore(c.text, "hills"), [2, 1])',
  vector: 'SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), VectorDistance(c.v, [1, 0, 0]))',
  vectorOnly: 'SELECT TOP 3 c.id FROM c ORDER BY RANK VectorDistance(c.v, [0, 1, 0])',
};

async function pkContainer(client, props = {}) {
  const { database } = await client.databases.create({ id: "db" });
  const { container } = await database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] }, ...props });
  return container;
}

// pages runs a query iterator to the end with fetchNext and returns the
// rows of each page.
async function pages(it) {
  const out = [];
  while (it.hasMoreResults()) {
    const { resources } = await it.fetchNext();
    // The SDK may end on an empty page (the service's last continuation).
    if (resources.length > 0 || out.length === 0) out.push(resources);
  }
  return out;
}

// seed writes the 12 items the Go test's expectations assume: ids i00..i11
// with i 0..11, pk "p0".."p2" (i mod 3) and parity "even" or "odd".
async function seed(container) {
  for (let i = 0; i < 12; i++) {
    await container.items.create({
      id: `i${String(i).padStart(2, "0")}`, pk: `p${i % 3}`, i, parity: i % 2 ? "odd" : "even",
    });
  }
}

const scenarios = {
  // The account's default consistency level (issue 26.7): what
  // getDatabaseAccount reads, and the status of a read that asks for each
  // level, per request and as a client's level (which the SDK sends on
  // every request, the account read included).
  async consistency(client, a) {
    const { resource: account } = await client.getDatabaseAccount();
    const c = await pkContainer(client);
    await c.items.create({ id: "a", pk: "p" });
    const status = async (f) => (await failure(f)) || 200;
    const levels = ["Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual"];
    const perRequest = {};
    const perClient = {};
    for (const level of levels) {
      perRequest[level] = await status(() => c.item("a", "p").read({ consistencyLevel: level }));
      const other = new CosmosClient({ endpoint: a.endpoint, key: a.key, consistencyLevel: level });
      try {
        perClient[level] = await status(() => other.database("db").container("c").item("a", "p").read());
      } finally {
        other.dispose();
      }
    }
    return { defaultConsistencyLevel: account.consistencyPolicy, perRequest, perClient };
  },

  // Item ids with the characters the service's gateway takes (issue 26.5):
  // each is created, read, replaced, deleted and read again by its id. The
  // SDK builds an item's path with encodeURI, which leaves '?' as it is.
  // Then ids the gateway takes on create but cannot route (a trailing
  // space, an escape sequence; a trailing '?', which node's request drops
  // with the empty query it starts) and the longest id and one byte more.
  async "item-ids"(client) {
    const c = await pkContainer(client);
    const ops = async (id) => {
      const item = c.item(id, "p");
      return [
        (await c.items.create({ id, pk: "p", v: 1 })).statusCode,
        (await item.read()).resource?.id === id ? 200 : -1,
        (await item.replace({ id, pk: "p", v: 2 })).statusCode,
        (await item.read()).resource?.v,
        (await item.delete()).statusCode,
        (await item.read()).statusCode,
      ];
    };
    const routable = {};
    for (const id of ["a?b", "?lead", "q?x&y=z+w%", "50% off", "with space", "plus+sign", "a=b&c=d",
      "semi;colon", "ü-nicode 鱀", "WithAllowedSpecial,=.:~+-@()^${}[]!_Chars"]) {
      routable[id] = await ops(id);
    }
    const unroutable = {};
    for (const id of ["Test ", "Escaped%20", "With\tTab", "trail?"]) {
      const item = c.item(id, "p");
      unroutable[id] = [
        (await c.items.create({ id, pk: "p" })).statusCode,
        await failure(() => item.read()),
        await failure(() => item.replace({ id, pk: "p", v: 2 })),
        await failure(() => item.delete()),
      ];
    }
    const longest = "x".repeat(1023);
    return {
      routable,
      unroutable,
      longest: await ops(longest),
      tooLong: await failure(() => c.items.create({ id: longest + "x", pk: "p" })),
    };
  },

  // Databases and containers: create, read, list, query, replace, delete,
  // with a partition key, a hierarchical (MultiHash) key and defaultTtl.
  async "databases-containers"(client) {
    const out = {};
    await client.databases.create({ id: "d1" });
    await client.databases.create({ id: "d2" });
    out.createDuplicate = await failure(() => client.databases.create({ id: "d1" }));
    const { resource: d1, statusCode: readStatus } = await client.database("d1").read();
    out.readDatabase = { id: d1.id, status: readStatus, hasRid: !!d1._rid, hasEtag: !!d1._etag, hasSelf: !!d1._self };
    out.listDatabases = sorted(ids((await client.databases.readAll().fetchAll()).resources));
    out.queryDatabases = ids((await client.databases.query({
      query: "SELECT * FROM r WHERE r.id = @id", parameters: [{ name: "@id", value: "d2" }],
    }).fetchAll()).resources);
    const { statusCode: ifNotExists } = await client.databases.createIfNotExists({ id: "d1" });
    out.createIfNotExistsStatus = ifNotExists;

    const db = client.database("d1");
    await db.containers.create({ id: "plain", partitionKey: { paths: ["/pk"] }, defaultTtl: 3600 });
    await db.containers.create({
      id: "hier",
      partitionKey: { paths: ["/tenant", "/user"], kind: PartitionKeyKind.MultiHash, version: PartitionKeyDefinitionVersion.V2 },
    });
    await db.containers.create({ id: "ttl", partitionKey: "/pk", defaultTtl: -1 });
    out.createContainerDuplicate = await failure(() => db.containers.create({ id: "plain", partitionKey: { paths: ["/pk"] } }));
    const view = async (id) => {
      const { resource: c } = await db.container(id).read();
      return { id: c.id, paths: c.partitionKey.paths, kind: c.partitionKey.kind, version: c.partitionKey.version ?? null, defaultTtl: c.defaultTtl ?? null };
    };
    out.containers = [await view("plain"), await view("hier"), await view("ttl")];
    out.listContainers = sorted(ids((await db.containers.readAll().fetchAll()).resources));
    out.queryContainers = ids((await db.containers.query("SELECT * FROM c WHERE c.defaultTtl = -1").fetchAll()).resources);

    // A container replace changes defaultTtl.
    const { resource: plain } = await db.container("plain").read();
    await db.container("plain").replace({ ...plain, defaultTtl: 60 });
    out.replacedDefaultTtl = (await view("plain")).defaultTtl;

    await db.container("hier").delete();
    out.readDeletedContainer = await failure(() => db.container("hier").read());
    out.listAfterDelete = sorted(ids((await db.containers.readAll().fetchAll()).resources));
    await client.database("d2").delete();
    out.readDeletedDatabase = await failure(() => client.database("d2").read());
    out.listDatabasesAfterDelete = ids((await client.databases.readAll().fetchAll()).resources);
    await db.delete();
    out.containerOfDeletedDatabase = await failure(() => db.container("plain").read());
    return out;
  },

  // Items: create, read, replace, upsert and delete with ETags.
  async items(client) {
    const c = await pkContainer(client);
    const out = {};
    const created = await c.items.create({ id: "a", pk: "p", v: 1 });
    out.create = { status: created.statusCode, v: created.resource.v, etagMatches: created.etag === created.resource._etag, hasTs: typeof created.resource._ts === "number" };
    out.createDuplicate = await failure(() => c.items.create({ id: "a", pk: "p" }));
    const read = await c.item("a", "p").read();
    out.read = { status: read.statusCode, v: read.resource.v, sameEtag: read.etag === created.etag };
    out.readMissing = (await c.item("nope", "p").read()).statusCode;
    out.readOtherPartition = (await c.item("a", "q").read()).statusCode;

    const notModified = await c.item("a", "p").read({ accessCondition: { type: "IfNoneMatch", condition: created.etag } });
    out.ifNoneMatchSame = { status: notModified.statusCode, resource: notModified.resource ?? null };

    const replaced = await c.item("a", "p").replace({ id: "a", pk: "p", v: 2 }, { accessCondition: { type: "IfMatch", condition: created.etag } });
    out.replaceIfMatch = { status: replaced.statusCode, v: replaced.resource.v, newEtag: replaced.etag !== created.etag };
    out.replaceStale = await failure(() => c.item("a", "p").replace({ id: "a", pk: "p", v: 3 }, { accessCondition: { type: "IfMatch", condition: created.etag } }));
    const changed = await c.item("a", "p").read({ accessCondition: { type: "IfNoneMatch", condition: created.etag } });
    out.ifNoneMatchStale = { status: changed.statusCode, v: changed.resource?.v };
    out.replaceMissing = await failure(() => c.item("nope", "p").replace({ id: "nope", pk: "p" }));

    const upsertNew = await c.items.upsert({ id: "b", pk: "p", v: 1 });
    const upsertOld = await c.items.upsert({ id: "b", pk: "p", v: 2 });
    out.upsert = { newStatus: upsertNew.statusCode, existingStatus: upsertOld.statusCode, v: upsertOld.resource.v };
    out.upsertStale = await failure(() => c.items.upsert({ id: "b", pk: "p", v: 3 }, { accessCondition: { type: "IfMatch", condition: upsertNew.etag } }));

    out.deleteStale = await failure(() => c.item("a", "p").delete({ accessCondition: { type: "IfMatch", condition: created.etag } }));
    const deleted = await c.item("a", "p").delete({ accessCondition: { type: "IfMatch", condition: replaced.etag } });
    out.deleteStatus = deleted.statusCode;
    out.readDeleted = (await c.item("a", "p").read()).statusCode;
    out.deleteMissing = await failure(() => c.item("a", "p").delete());

    // Ids with characters that need escaping in the path.
    await c.items.create({ id: "with space+plus", pk: "p" });
    out.oddID = (await c.item("with space+plus", "p").read()).resource?.id;

    // Numbers, booleans, null and no value as partition keys.
    await c.items.create({ id: "n", pk: 7 });
    await c.items.create({ id: "t", pk: true });
    await c.items.create({ id: "z", pk: null });
    await c.items.create({ id: "u" });
    out.keyTypes = [
      // No partition key value: the SDK sends PartitionKey.None, [{}].
      (await c.item("u").read()).statusCode,
      (await c.item("n", 7).read()).statusCode,
      (await c.item("t", true).read()).statusCode,
      (await c.item("z", null).read()).statusCode,
      (await c.item("n", "7").read()).statusCode,
    ];

    // A hierarchical key.
    const { container: h } = await client.database("db").containers.create({
      id: "h",
      partitionKey: { paths: ["/tenant", "/user"], kind: PartitionKeyKind.MultiHash, version: PartitionKeyDefinitionVersion.V2 },
    });
    await h.items.create({ id: "x", tenant: "t1", user: "u1", v: 1 });
    await h.items.create({ id: "x", tenant: "t1", user: "u2", v: 2 });
    await h.items.create({ id: "y", tenant: "t2", user: "u1", v: 3 });
    out.hier = {
      read: (await h.item("x", ["t1", "u2"]).read()).resource?.v,
      missing: (await h.item("y", ["t1", "u1"]).read()).statusCode,
      tenantQuery: ids((await h.items.query("SELECT * FROM c ORDER BY c.v", { partitionKey: ["t1"] }).fetchAll()).resources).length,
      replaced: (await h.item("y", ["t2", "u1"]).replace({ id: "y", tenant: "t2", user: "u1", v: 4 })).resource.v,
      deleted: (await h.item("x", ["t1", "u1"]).delete()).statusCode,
      left: (await h.items.query("SELECT VALUE c.v FROM c").fetchAll()).resources.sort(),
    };
    return out;
  },

  // Patch, with the operations in a PatchRequestBody ({condition?,
  // operations}): every operation, and a conditional patch.
  async patch(client) {
    const c = await pkContainer(client);
    const out = {};
    const { etag } = await c.items.create({ id: "a", pk: "p", n: 1, tags: ["x"], nested: { keep: true, drop: 1 }, old: "o" });
    const { resource: patched, statusCode } = await c.item("a", "p").patch({
      operations: [
        { op: "add", path: "/added", value: "new" },
        { op: "add", path: "/tags/-", value: "y" },
        { op: "replace", path: "/old", value: "replaced" },
        { op: "set", path: "/nested/set", value: 5 },
        { op: "incr", path: "/n", value: 2 },
        { op: "remove", path: "/nested/drop" },
        { op: "move", from: "/added", path: "/moved" },
      ],
    });
    out.status = statusCode;
    out.doc = { n: patched.n, tags: patched.tags, nested: patched.nested, old: patched.old, moved: patched.moved, added: patched.added ?? null };
    out.conditionFalse = await failure(() => c.item("a", "p").patch({ condition: "from c where c.n = 1", operations: [{ op: "set", path: "/x", value: 1 }] }));
    const ok = await c.item("a", "p").patch({ condition: "from c where c.n = 3", operations: [{ op: "set", path: "/x", value: 1 }] });
    out.conditionTrue = { status: ok.statusCode, x: ok.resource.x };
    out.ifMatchStale = await failure(() => c.item("a", "p").patch({ operations: [{ op: "set", path: "/y", value: 1 }] }, { accessCondition: { type: "IfMatch", condition: etag } }));
    out.replaceMissingPath = await failure(() => c.item("a", "p").patch({ operations: [{ op: "replace", path: "/nope", value: 1 }] }));
    out.missingItem = await failure(() => c.item("nope", "p").patch({ operations: [{ op: "set", path: "/y", value: 1 }] }));
    out.final = (await c.item("a", "p").read()).resource.x;
    return out;
  },

  // Patch with the operations as a bare array, item.patch([...]), the
  // SDK's most documented form: the SDK sends the array itself as the body.
  async "patch-array"(client) {
    const c = await pkContainer(client);
    await c.items.create({ id: "a", pk: "p", n: 1 });
    const { resource, statusCode } = await c.item("a", "p").patch([
      { op: "incr", path: "/n", value: 2 },
      { op: "add", path: "/added", value: "new" },
    ]);
    // A batch's Patch operation takes the same PatchRequestBody.
    const batch = await c.items.batch([
      { operationType: BulkOperationType.Patch, id: "a", resourceBody: [{ op: "incr", path: "/n", value: 10 }] },
    ], "p");
    return {
      status: statusCode, n: resource.n, added: resource.added,
      batch: { code: batch.code, statuses: batch.result.map((r) => r.statusCode), n: batch.result[0].resourceBody?.n },
    };
  },

  // Transactional batch: one that succeeds, one whose second operation
  // fails (nothing of it is applied).
  async batch(client) {
    const c = await pkContainer(client);
    await c.items.create({ id: "old", pk: "p", v: 1 });
    await c.items.create({ id: "gone", pk: "p" });
    const out = {};
    const ok = await c.items.batch([
      { operationType: BulkOperationType.Create, resourceBody: { id: "new", pk: "p", v: 1 } },
      { operationType: BulkOperationType.Upsert, resourceBody: { id: "up", pk: "p", v: 2 } },
      { operationType: BulkOperationType.Read, id: "old" },
      { operationType: BulkOperationType.Replace, id: "old", resourceBody: { id: "old", pk: "p", v: 3 } },
      { operationType: BulkOperationType.Patch, id: "new", resourceBody: { operations: [{ op: "incr", path: "/v", value: 10 }] } },
      { operationType: BulkOperationType.Delete, id: "gone" },
    ], "p");
    out.ok = {
      code: ok.code ?? null,
      statuses: ok.result.map((r) => r.statusCode),
      readV: ok.result[2].resourceBody?.v,
      // Every operation but the delete answers with the item's new ETag.
      etags: ok.result.slice(0, 5).every((r) => typeof r.eTag === "string" && r.eTag.length > 0),
    };
    const failed = await c.items.batch([
      { operationType: BulkOperationType.Create, resourceBody: { id: "fresh", pk: "p" } },
      { operationType: BulkOperationType.Create, resourceBody: { id: "old", pk: "p" } },
      { operationType: BulkOperationType.Upsert, resourceBody: { id: "up", pk: "p", v: 99 } },
    ], "p");
    out.failed = { code: failed.code ?? null, statuses: failed.result.map((r) => r.statusCode) };
    out.after = {
      fresh: (await c.item("fresh", "p").read()).statusCode,
      up: (await c.item("up", "p").read()).resource.v,
      newV: (await c.item("new", "p").read()).resource.v,
      gone: (await c.item("gone", "p").read()).statusCode,
      oldV: (await c.item("old", "p").read()).resource.v,
    };
    return out;
  },

  // Bulk (non-atomic batches across partitions): executeBulkOperations and
  // the older bulk, each operation on its own; a failure stops nothing.
  async bulk(client) {
    const c = await pkContainer(client);
    await c.items.create({ id: "old", pk: "p2", v: 1 });
    const res = await c.items.executeBulkOperations([
      { operationType: BulkOperationType.Create, partitionKey: "p1", resourceBody: { id: "a", pk: "p1", v: 1 } },
      { operationType: BulkOperationType.Create, partitionKey: "p2", resourceBody: { id: "old", pk: "p2" } },
      { operationType: BulkOperationType.Upsert, partitionKey: "p2", resourceBody: { id: "old", pk: "p2", v: 2 } },
      { operationType: BulkOperationType.Read, id: "a", partitionKey: "p1" },
      { operationType: BulkOperationType.Delete, id: "missing", partitionKey: "p1" },
      { operationType: BulkOperationType.Patch, id: "a", partitionKey: "p1", resourceBody: { operations: [{ op: "incr", path: "/v", value: 5 }] } },
    ]);
    const out = { statuses: res.map((r) => r.response?.statusCode ?? r.error?.code ?? null) };
    const legacy = await c.items.bulk([
      { operationType: BulkOperationType.Create, resourceBody: { id: "b", pk: "p3" } },
      { operationType: BulkOperationType.Replace, id: "old", resourceBody: { id: "old", pk: "p2", v: 3 } },
    ]);
    out.legacy = legacy.map((r) => r.statusCode);
    out.after = {
      a: (await c.item("a", "p1").read()).resource.v,
      old: (await c.item("old", "p2").read()).resource.v,
      b: (await c.item("b", "p3").read()).statusCode,
    };
    return out;
  },

  // Queries in one partition: parameters, and paging with maxItemCount,
  // fetchNext and a continuation token taken up by a new iterator.
  async query(client) {
    const c = await pkContainer(client);
    await seed(c);
    const out = {};
    out.params = ids((await c.items.query({
      query: "SELECT * FROM c WHERE c.parity = @parity AND c.i > @min", parameters: [{ name: "@parity", value: "even" }, { name: "@min", value: 2 }],
    }, { partitionKey: "p0" }).fetchAll()).resources);
    out.paged = (await pages(c.items.query("SELECT * FROM c", { partitionKey: "p1", maxItemCount: 2 }))).map(ids);

    // A cross-partition ORDER BY runs in the SDK's pipeline (the gateway
    // refuses it with its plan), which gives continuation tokens with
    // enableQueryControl.
    const ordered = { maxItemCount: 5, enableQueryControl: true };
    const first = await c.items.query("SELECT * FROM c ORDER BY c.i DESC", ordered).fetchNext();
    out.firstPage = ids(first.resources);
    out.hasContinuation = typeof first.continuationToken === "string" && first.continuationToken.length > 0;
    const rest = await c.items.query("SELECT * FROM c ORDER BY c.i DESC", { ...ordered, continuationToken: first.continuationToken }).fetchAll();
    out.resumed = ids(rest.resources);
    out.values = (await c.items.query("SELECT VALUE c.i * 10 FROM c WHERE c.pk = 'p2'").fetchAll()).resources;
    const asyncPages = [];
    for await (const page of c.items.query("SELECT VALUE c.id FROM c WHERE c.parity = 'odd'", { partitionKey: "p0", maxItemCount: 1 }).getAsyncIterator()) {
      asyncPages.push(page.resources);
    }
    out.asyncPages = asyncPages;
    out.badQuery = await failure(() => c.items.query("SELECT * FROM c WHERE").fetchAll());
    return out;
  },

  // Cross-partition queries the SDK leaves to the gateway (no partition
  // key): ORDER BY, aggregates, GROUP BY, DISTINCT, OFFSET LIMIT and TOP.
  async "cross-partition"(client) {
    const c = await pkContainer(client);
    await seed(c);
    const all = async (q, opts) => (await c.items.query(q, opts).fetchAll()).resources;
    return {
      orderBy: ids(await all("SELECT * FROM c ORDER BY c.i DESC")),
      orderByPaged: (await pages(c.items.query("SELECT c.id FROM c ORDER BY c.i", { maxItemCount: 5 }))).map(ids),
      count: await all("SELECT VALUE COUNT(1) FROM c"),
      sum: await all("SELECT VALUE SUM(c.i) FROM c WHERE c.parity = 'odd'"),
      groupBy: (await all("SELECT c.pk, COUNT(1) AS n, MAX(c.i) AS highest FROM c GROUP BY c.pk"))
        .sort((a, b) => (a.pk < b.pk ? -1 : 1)),
      distinct: (await all("SELECT DISTINCT VALUE c.parity FROM c")).sort(),
      offsetLimit: ids(await all("SELECT * FROM c ORDER BY c.i OFFSET 3 LIMIT 4")),
      top: ids(await all("SELECT TOP 3 * FROM c ORDER BY c.i DESC")),
      filtered: ids(await all("SELECT * FROM c WHERE c.i >= 9 ORDER BY c.id")),
      crossPaged: (await pages(c.items.query("SELECT * FROM c WHERE c.parity = 'even'", { maxItemCount: 4 }))).map((p) => p.length),
    };
  },

  // forceQueryPlan makes the SDK plan every query itself: it asks for the
  // query plan (x-ms-cosmos-is-query-plan-request), reads /pkranges and
  // runs the plan's pipeline, a query per partition key range: the
  // rewritten query of the plan, whose rows the pipeline merges (issue
  // 26.1). Every page is kept, empty ones too: the pages end where the
  // rows do.
  async "force-query-plan"(client) {
    // ORDER BY on two properties needs a composite index that serves it.
    const c = await pkContainer(client, { indexingPolicy: { compositeIndexes: [[
      { path: "/parity", order: "ascending" }, { path: "/i", order: "descending" }]] } });
    await seed(c);
    const opts = { forceQueryPlan: true };
    const all = async (q) => (await c.items.query(q, opts).fetchAll()).resources;
    const everyPage = async (q, maxItemCount) => {
      const it = c.items.query(q, { ...opts, maxItemCount });
      const out = [];
      while (it.hasMoreResults()) out.push((await it.fetchNext()).resources.length);
      return out;
    };
    return {
      filtered: ids(await all("SELECT * FROM c WHERE c.i < 3 ORDER BY c.id")),
      orderBy: ids(await all("SELECT * FROM c ORDER BY c.i DESC")),
      orderByTwo: ids(await all("SELECT c.id, c.parity FROM c ORDER BY c.parity ASC, c.i DESC")),
      orderByValue: await all("SELECT VALUE c.i FROM c WHERE c.pk = 'p1' ORDER BY c.i DESC"),
      count: await all("SELECT VALUE COUNT(1) FROM c"),
      sum: await all("SELECT VALUE SUM(c.i) FROM c WHERE c.parity = 'odd'"),
      avg: await all("SELECT VALUE AVG(c.i) FROM c"),
      min: await all("SELECT VALUE MIN(c.i) FROM c WHERE c.i > 4"),
      max: await all("SELECT VALUE MAX(c.id) FROM c"),
      emptyMax: await all("SELECT VALUE MAX(c.i) FROM c WHERE c.i > 100"),
      counts: await all("SELECT COUNT(1) AS n, SUM(c.i) AS total FROM c"),
      groupBy: (await all("SELECT c.pk, COUNT(1) AS n, MAX(c.i) AS highest, AVG(c.i) AS mean FROM c GROUP BY c.pk"))
        .sort((a, b) => (a.pk < b.pk ? -1 : 1)),
      groupByValue: (await all("SELECT VALUE c.parity FROM c GROUP BY c.parity")).sort(),
      distinct: (await all("SELECT DISTINCT VALUE c.parity FROM c")).sort(),
      distinctOrdered: await all("SELECT DISTINCT VALUE c.pk FROM c ORDER BY c.pk"),
      offsetLimit: ids(await all("SELECT * FROM c ORDER BY c.i OFFSET 3 LIMIT 4")),
      offsetLimitUnordered: (await all("SELECT * FROM c OFFSET 10 LIMIT 5")).length,
      top: ids(await all("SELECT TOP 3 * FROM c ORDER BY c.i DESC")),
      orderByPages: await everyPage("SELECT c.id FROM c ORDER BY c.i", 5),
      pages: await everyPage("SELECT * FROM c WHERE c.parity = 'even'", 3),
    };
  },

  // Full-text search on a container with a full-text policy and index:
  // FullTextContains across partitions, ORDER BY RANK FullTextScore (most
  // relevant first) and RRF, and the policy read back.
  async "full-text-search"(client) {
    const fullTextPolicy = { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] };
    const c = await pkContainer(client, {
      fullTextPolicy,
      indexingPolicy: { includedPaths: [{ path: "/*" }], fullTextIndexes: [{ path: "/text" }] },
    });
    const texts = ["a red bicycle", "mountain bicycles for mountain trails", "a blue skateboard", "red shoes"];
    for (const [i, text] of texts.entries()) await c.items.create({ id: `t${i}`, pk: `p${i % 2}`, text });
    const all = async (q) => (await c.items.query(q).fetchAll()).resources;
    const { resource } = await c.read();
    return {
      contains: sorted(ids(await all('SELECT c.id FROM c WHERE FullTextContains(c.text, "bicycle")'))),
      containsAny: sorted(ids(await all('SELECT c.id FROM c WHERE FullTextContainsAny(c.text, "skateboard", "shoe")'))),
      rank: ids(await all('SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.text, "mountain", "bicycle")')),
      rrf: ids(await all('SELECT TOP 1 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "red"), FullTextScore(c.text, "bicycle"))')),
      policy: resource.fullTextPolicy,
    };
  },

  // Issue 26: hybrid search (ORDER BY RANK) over a container of five
  // partition key ranges, which the SDK runs through its own pipeline:
  // the gateway's plan, the statistics query on every range, the
  // component queries, its own rank fusion. Each query's rows, in order.
  async "hybrid-search"(client) {
    const { database } = await client.databases.create({ id: "db" });
    const { container: c } = await database.containers.create({
      id: "c", partitionKey: { paths: ["/pk"] },
      fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] },
      indexingPolicy: { includedPaths: [{ path: "/*" }], fullTextIndexes: [{ path: "/text" }] },
    }, { offerThroughput: 25100 });
    for (const [i, d] of hybridDocs.entries()) {
      await c.items.create({ id: `h${String(i).padStart(2, "0")}`, pk: `k${i % 7}`, ...d });
    }
    const results = {};
    for (const [name, text] of Object.entries(hybridQueries)) {
      results[name] = (await c.items.query(text).fetchAll()).resources;
    }
    return { queries: hybridQueries, results };
  },

  // readAll (the SDK sends it as the query SELECT * from c), paged.
  async "read-all"(client) {
    const c = await pkContainer(client);
    await seed(c);
    const paged = await pages(c.items.readAll({ maxItemCount: 5 }));
    const one = await pages(c.items.readAll({ partitionKey: "p2", maxItemCount: 3 }));
    return {
      pageSizes: paged.map((p) => p.length),
      ids: sorted(paged.flat().map((r) => r.id)),
      partitionPages: one.map(ids),
      all: (await c.items.readAll().fetchAll()).resources.length,
    };
  },

  // Issue 26.2: a container of 25,100 RU/s has five partition key
  // ranges, as on the service (one per 6,000 RU/s above 10,000). Each item is in one
  // range, by the EPK the SDK computes itself: its feed ranges, the
  // change feed of each, its pipelines' queries per range and its point
  // operations all agree with lapse's.
  async ranges(client) {
    const { database } = await client.databases.create({ id: "db" });
    const { container: c } = await database.containers.create(
      { id: "c", partitionKey: { paths: ["/pk"] } }, { offerThroughput: 25100 });
    const n = 30;
    let created;
    for (let i = 0; i < n; i++) {
      created = await c.items.create({ id: `i${String(i).padStart(2, "0")}`, pk: `k${i % 10}`, i });
    }
    // Issue 26.4: the session token of a write is its range's, and the SDK
    // keeps one per range by the container's content path.
    const oneToken = /^\d+:-1#\d+$/.test(created.headers["x-ms-session-token"]);
    const kept = client.clientContext.sessionContainer.get({ resourceAddress: "/dbs/db/colls/c" });
    const sessionRanges = kept.split(",").map((t) => t.split(":")[0]).sort();
    const feedRanges = await c.getFeedRanges();
    const perRange = [];
    for (const fr of feedRanges) {
      const it = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(fr) });
      const got = [];
      for (let k = 0; k < 10; k++) {
        const r = await it.readNext();
        if (r.statusCode === 304) break;
        got.push(...ids(r.result));
      }
      perRange.push(got.length);
    }
    const whole = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const all = [];
    let lsns = true;
    for (let k = 0; k < 10; k++) {
      const r = await whole.readNext();
      if (r.statusCode === 304) break;
      all.push(...ids(r.result));
      // Issue 26.3: every document of the change feed has its _lsn.
      lsns = lsns && r.result.every((d) => Number.isInteger(d._lsn) && d._lsn > 0);
    }
    const q = async (text, opts = {}) => (await c.items.query(text, { forceQueryPlan: true, ...opts }).fetchAll()).resources;
    // A partition key's change feed: the SDK finds its range by the EPK
    // it computes.
    const byKey = [];
    for (let k = 0; k < 10; k++) {
      const it = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(`k${k}`) });
      byKey.push(ids((await it.readNext()).result).length);
    }
    const pinned = [];
    for (let k = 0; k < 10; k++) pinned.push((await q({ query: "SELECT VALUE c.i FROM c WHERE c.pk = @k", parameters: [{ name: "@k", value: `k${k}` }] })).length);
    return {
      feedRanges: feedRanges.length,
      perRangeTotal: perRange.reduce((a, b) => a + b, 0),
      rangesUsed: perRange.filter((x) => x > 0).length,
      changeFeed: sorted(all).length,
      orderBy: (await q("SELECT VALUE c.i FROM c ORDER BY c.i DESC")).slice(0, 5),
      count: await q("SELECT VALUE COUNT(1) FROM c"),
      max: await q("SELECT VALUE MAX(c.i) FROM c"),
      groups: (await q("SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk")).length,
      top: (await q("SELECT TOP 3 VALUE c.i FROM c ORDER BY c.i")),
      offsetLimit: (await q("SELECT VALUE c.i FROM c ORDER BY c.i OFFSET 28 LIMIT 5")),
      byKey,
      pinned,
      oneToken,
      sessionRanges,
      lsns,
      readAll: (await c.items.readAll().fetchAll()).resources.length,
      read: (await c.item("i07", "k7").read()).resource.i,
    };
  },

  // The change feed (getChangeFeedIterator): from the beginning and from
  // now, then more writes, then only what is new; nothing new is 304.
  async "change-feed"(client) {
    const c = await pkContainer(client);
    await c.items.create({ id: "a", pk: "p" });
    await c.items.create({ id: "b", pk: "q" });
    const out = {};
    const read = async (it) => {
      const r = await it.readNext();
      return { status: r.statusCode, ids: ids(r.result), continuation: r.continuationToken };
    };
    const beginning = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const now = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now() });
    const partition = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("p") });
    const b1 = await read(beginning);
    const n1 = await read(now);
    const p1 = await read(partition);
    out.beginning = { status: b1.status, ids: sorted(b1.ids) };
    out.now = { status: n1.status, ids: n1.ids };
    out.partition = { status: p1.status, ids: p1.ids };
    const b2 = await read(beginning);
    out.beginningAgain = { status: b2.status, ids: b2.ids };

    await c.items.create({ id: "c", pk: "q" });
    await c.items.upsert({ id: "a", pk: "p", changed: true });
    await c.items.create({ id: "d", pk: "r" });
    const b3 = await read(beginning);
    out.afterWrites = { status: b3.status, ids: sorted(b3.ids) };
    out.nowAfterWrites = sorted((await read(now)).ids);
    out.partitionAfterWrites = (await read(partition)).ids;

    // A new iterator from the continuation of the first.
    await c.items.create({ id: "e", pk: "p" });
    const resumed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(b3.continuation) });
    const r1 = await read(resumed);
    out.resumed = { status: r1.status, ids: r1.ids };
    out.resumedAgain = (await read(resumed)).status;

    // maxItemCount pages the feed.
    const small = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 2 });
    const sizes = [];
    for (let i = 0; i < 10; i++) {
      const r = await small.readNext();
      if (r.statusCode === 304) break;
      sizes.push(r.result.length);
    }
    out.pagedSizes = sizes;

    // The older API, one partition key at a time.
    const legacy = c.items.changeFeed("p", { startFromBeginning: true });
    const l1 = await legacy.fetchNext();
    out.legacy = { status: l1.statusCode, ids: ids(l1.result), hasMore: legacy.hasMoreResults };
    const l2 = await legacy.fetchNext();
    out.legacyAgain = { status: l2.statusCode, count: l2.count, hasMore: legacy.hasMoreResults };
    await c.items.upsert({ id: "e", pk: "p", v: 2 });
    const legacyNext = c.items.changeFeed("p", { continuation: l2.etag });
    const l3 = await legacyNext.fetchNext();
    out.legacyContinued = { status: l3.statusCode, ids: ids(l3.result) };
    const legacyNow = c.items.changeFeed("q", {});
    out.legacyNow = (await legacyNow.fetchNext()).statusCode;
    return out;
  },

  // The change feed in all-versions-and-deletes mode: from the beginning
  // or a point in time it is refused (400); from now on and from a
  // continuation it lists each change once, an expiry as a delete with
  // timeToLiveExpired, once the Go test has moved the clock 60 s (CO-6).
  async "all-versions"(client, a) {
    const c = await pkContainer(client, { defaultTtl: -1 });
    const changeFeedMode = ChangeFeedMode.AllVersionsAndDeletes;
    const iter = (changeFeedStartFrom, more = {}) => c.items.getChangeFeedIterator({ changeFeedStartFrom, changeFeedMode, ...more });
    const refused = async (from) => failure(() => iter(from).readNext());
    const row = (r) => ({
      op: r.metadata.operationType,
      id: r.metadata.operationType === "delete" ? r.metadata.id : r.current.id,
      ttlExpired: r.metadata.timeToLiveExpired,
    });
    const read = async (it) => {
      const r = await it.readNext();
      return { status: r.statusCode, rows: r.result.map(row), continuation: r.continuationToken };
    };
    const out = {
      beginning: await refused(ChangeFeedStartFrom.Beginning()),
      beginningPartition: await refused(ChangeFeedStartFrom.Beginning("p")),
      time: await refused(ChangeFeedStartFrom.Time(new Date(Date.now() - 3600 * 1000))),
    };
    const now = iter(ChangeFeedStartFrom.Now());
    const partition = iter(ChangeFeedStartFrom.Now("p"));
    const first = await read(now);
    out.now = first.status;
    out.partitionNow = (await read(partition)).status;
    await c.items.create({ id: "x", pk: "p", ttl: 60 });
    await c.items.create({ id: "y", pk: "q" });
    await c.items.upsert({ id: "y", pk: "q", v: 2 });
    await c.item("y", "q").delete();
    await advance(a.control, "60s");
    const all = await read(now);
    out.all = { status: all.status, rows: all.rows };
    out.partition = (await read(partition)).rows;
    out.again = (await read(now)).status;
    // A new iterator from the continuation of the first read.
    const resumed = iter(ChangeFeedStartFrom.Continuation(first.continuation));
    out.resumed = (await read(resumed)).rows.length;
    // One change a page.
    const small = iter(ChangeFeedStartFrom.Continuation(first.continuation), { maxItemCount: 1 });
    const sizes = [];
    for (let i = 0; i < 10; i++) {
      const r = await small.readNext();
      if (r.statusCode === 304) break;
      sizes.push(r.result.length);
    }
    out.pagedSizes = sizes;
    return out;
  },

  // TTL: an item with ttl 60 in a container with defaultTtl -1 is gone
  // from every read once the Go test has moved the clock 60 s.
  async ttl(client, a) {
    const c = await pkContainer(client, { defaultTtl: -1 });
    await c.items.create({ id: "short", pk: "p", ttl: 60 });
    await c.items.create({ id: "forever", pk: "p" });
    const feed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const look = async () => ({
      read: (await c.item("short", "p").read()).statusCode,
      query: ids((await c.items.query("SELECT * FROM c ORDER BY c.id", { partitionKey: "p" }).fetchAll()).resources),
      crossQuery: (await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources,
      readAll: sorted(ids((await c.items.readAll().fetchAll()).resources)),
      changeFeed: sorted(ids((await c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }).readNext()).result)),
      legacyChangeFeed: sorted(ids((await c.items.changeFeed("p", { startFromBeginning: true }).fetchNext()).result)),
    });
    const before = await look();
    const first = await feed.readNext();
    await advance(a.control, "59s");
    const at59 = (await c.item("short", "p").read()).statusCode;
    await advance(a.control, "1s");
    const after = await look();
    const next = await feed.readNext();
    return {
      before, at59, after,
      feedFirst: sorted(ids(first.result)),
      feedAfter: { status: next.statusCode, ids: ids(next.result) },
    };
  },

  // A wrong key is 401 on every request.
  async "wrong-key"(client, a) {
    const wrong = Buffer.alloc(64, 7).toString("base64");
    const bad = new CosmosClient({ endpoint: a.endpoint, key: wrong });
    try {
      return {
        readDatabases: await failure(() => bad.databases.readAll().fetchAll()),
        createDatabase: await failure(() => bad.databases.create({ id: "x" })),
        // The right key still works, and nothing was created.
        created: (await client.databases.readAll().fetchAll()).resources.length,
      };
    } finally {
      bad.dispose();
    }
  },

  // HTTPS, trusting the certificate the server serves at
  // /_explorer/emulator.pem (fetched over plain HTTP, as a user would curl
  // it), through an https.Agent with that CA.
  async https(_client, a) {
    const res = await fetch(new URL("/_explorer/emulator.pem", a.endpoint));
    check(res.ok, `GET /_explorer/emulator.pem: ${res.status}`);
    const pem = await res.text();
    const endpoint = a.endpoint.replace(/^http:/, "https:");
    const agent = new https.Agent({ ca: pem, keepAlive: true });
    const client = new CosmosClient({ endpoint, key: a.key, agent });
    const untrusted = new CosmosClient({ endpoint, key: a.key });
    try {
      const c = await pkContainer(client);
      await c.items.create({ id: "a", pk: "p", v: 1 });
      let untrustedError = "no error";
      try {
        await untrusted.databases.readAll().fetchAll();
      } catch (err) {
        untrustedError = err?.cause?.code ?? err?.code ?? String(err);
      }
      const { resource: account } = await client.getDatabaseAccount();
      return {
        pemSHA256: createHash("sha256").update(pem).digest("hex"),
        read: (await c.item("a", "p").read()).resource.v,
        query: (await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources,
        writableLocations: account.writableLocations.map((l) => l.databaseAccountEndpoint),
        untrustedError,
      };
    } finally {
      client.dispose();
      untrusted.dispose();
      agent.destroy();
    }
  },
  // issue 26.6: a container's indexing policy as the service writes it
  // back, with the _etag path it always excludes.
  async "i26-indexing-policy"(client) {
    const { database } = await client.databases.create({ id: "db" });
    const { resource: plain } = await database.containers.create({ id: "plain", partitionKey: { paths: ["/pk"] } });
    const { resource: given } = await database.containers.create({
      id: "given", partitionKey: { paths: ["/pk"] },
      indexingPolicy: { includedPaths: [{ path: "/*" }], excludedPaths: [{ path: "/skip/*" }] },
    });
    const { resource: read } = await database.container("given").read();
    const view = (p) => ({ indexingMode: p.indexingMode, automatic: p.automatic,
      includedPaths: p.includedPaths.map((x) => x.path), excludedPaths: p.excludedPaths.map((x) => x.path) });
    return { plain: view(plain.indexingPolicy), given: view(given.indexingPolicy), read: view(read.indexingPolicy) };
  },

  // issue 26.6: quota and usage when asked for, and the index
  // transformation's progress, on a container's read.
  async "i26-quota-info"(client) {
    const c = await pkContainer(client);
    await c.items.create({ id: "a", pk: "p", text: "x".repeat(3000) });
    await c.items.create({ id: "b", pk: "p" });
    const asked = await c.read({ populateQuotaInfo: true });
    const plain = await c.read();
    return {
      quota: asked.headers["x-ms-resource-quota"],
      usage: asked.headers["x-ms-resource-usage"],
      progress: asked.headers["x-ms-documentdb-collection-index-transformation-progress"],
      plainUsage: plain.headers["x-ms-resource-usage"] ?? null,
    };
  },

  // issue 26.6: deleteAllItemsForPartitionKey, of a key and of a prefix of
  // a hierarchical key: the items go from reads, queries and the change
  // feed, and the other partitions keep theirs.
  async "i26-delete-partition-key"(client) {
    const c = await pkContainer(client);
    for (const [id, pk] of [["a", "p0"], ["b", "p0"], ["c", "p1"]]) await c.items.create({ id, pk });
    const del = await c.deleteAllItemsForPartitionKey("p0");
    const readDeleted = (await c.item("a", "p0").read()).statusCode;
    const query = ids((await c.items.query("SELECT * FROM c ORDER BY c.id").fetchAll()).resources);
    const feed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
    const { result: changes } = await feed.readNext();
    await c.items.create({ id: "a", pk: "p0", again: true });
    const recreated = (await c.item("a", "p0").read()).resource.again;

    const { resource: hier } = await client.database("db").containers.create({
      id: "hier", partitionKey: { paths: ["/t", "/u"], kind: PartitionKeyKind.MultiHash, version: PartitionKeyDefinitionVersion.V2 },
    });
    const h = client.database("db").container(hier.id);
    for (const [id, t, u] of [["x", "a", "1"], ["y", "a", "2"], ["z", "b", "1"]]) await h.items.create({ id, t, u });
    const hdel = await h.deleteAllItemsForPartitionKey(["a"]);
    const hierLeft = ids((await h.items.query("SELECT * FROM c ORDER BY c.id").fetchAll()).resources);
    return { status: del.statusCode, readDeleted, query, changes: ids(changes), recreated, hierStatus: hdel.statusCode, hierLeft };
  },

  // issue 26.6: the conflicts feed of a single-region account is empty.
  async "i26-conflicts"(client) {
    const c = await pkContainer(client);
    await c.items.create({ id: "a", pk: "p" });
    const all = (await c.conflicts.readAll().fetchAll()).resources;
    const queried = (await c.conflicts.query("SELECT * FROM c").fetchAll()).resources;
    return { all, queried, readOne: await failure(() => c.conflict("nope", "p").read()) };
  },

  // issue 26.6: an offer replace whose body names another offer, or none,
  // is refused; the right one goes through.
  async "i26-offer-links"(client) {
    const c = await pkContainer(client);
    const { resource: container } = await c.read();
    const { resources: offers } = await client.offers.query({
      query: "SELECT * FROM o WHERE o.offerResourceId = @rid", parameters: [{ name: "@rid", value: container._rid }],
    }).fetchAll();
    const offer = offers[0];
    const badRid = await failure(() => client.offer(offer.id).replace({ ...offer, _rid: "InvalidRid" }));
    const badId = await failure(() => client.offer(offer.id).replace({ ...offer, id: "NotAllowed" }));
    const nullIds = await failure(() => client.offer(offer.id).replace({ ...offer, id: null, _rid: null }));
    const badResource = await failure(() => client.offer(offer.id).replace({ ...offer, resource: "dbs/AAAAAA==/colls/AAAAAAAAAAA=/" }));
    const good = await client.offer(offer.id).replace({ ...offer, content: { ...offer.content, offerThroughput: 500 } });
    return { badRid, badId, nullIds, badResource, good: good.resource.content.offerThroughput };
  },

  // issue 26.6: ORDER BY on two properties needs a composite index that
  // serves it; a vector index needs its vector embedding.
  async "i26-index-checks"(client) {
    const { database } = await client.databases.create({ id: "db" });
    const { container: plain } = await database.containers.create({ id: "plain", partitionKey: { paths: ["/pk"] } });
    const { container: composite } = await database.containers.create({
      id: "composite", partitionKey: { paths: ["/pk"] },
      indexingPolicy: { compositeIndexes: [[{ path: "/a", order: "ascending" }, { path: "/b", order: "descending" }]] },
    });
    for (const c of [plain, composite]) {
      for (const [id, a, b] of [["x", 1, 1], ["y", 1, 2], ["z", 0, 5]]) await c.items.create({ id, pk: "p", a, b });
    }
    const message = async (f) => {
      try { await f(); } catch (err) { return { code: err.code, message: err.body?.message ?? "" }; }
      return { code: 0, message: "" };
    };
    const q = "SELECT * FROM c ORDER BY c.a ASC, c.b DESC";
    const plainErr = await message(() => plain.items.query(q, { partitionKey: "p" }).fetchAll());
    const plainCross = await message(() => plain.items.query(q).fetchAll());
    const served = ids((await composite.items.query(q, { partitionKey: "p" }).fetchAll()).resources);
    const reversed = ids((await composite.items.query("SELECT * FROM c ORDER BY c.a DESC, c.b ASC", { partitionKey: "p" }).fetchAll()).resources);
    const mixed = await message(() => composite.items.query("SELECT * FROM c ORDER BY c.a ASC, c.b ASC", { partitionKey: "p" }).fetchAll());
    const single = ids((await plain.items.query("SELECT * FROM c ORDER BY c.b DESC", { partitionKey: "p" }).fetchAll()).resources);

    const vectorErr = await message(() => database.containers.create({
      id: "vec", partitionKey: { paths: ["/pk"] }, indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] },
    }));
    const { resource: vec } = await database.containers.create({
      id: "vec2", partitionKey: { paths: ["/pk"] },
      vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/vector1", dataType: "float32", dimensions: 3, distanceFunction: "cosine" }] },
      indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] },
    });
    return {
      plain: { code: plainErr.code, hasText: plainErr.message.includes("The order by query does not have a corresponding composite index that it can be served from.") },
      plainCross: plainCross.code,
      served, reversed, mixed: mixed.code, single,
      vector: { code: vectorErr.code, hasText: vectorErr.message.includes("Vector Indexing Policy's path::\\/vector1 not matching in Embedding's path") },
      vectorWithEmbedding: vec.indexingPolicy.vectorIndexes.map((x) => x.path),
    };
  },

  // issue 26.6: request charges that follow the operation and the size,
  // and LSNs that move with each write.
  async "i26-charge-lsn"(client) {
    const c = await pkContainer(client);
    const lsn = (r) => Number(r.headers["lsn"]);
    const committed = (r) => Number(r.headers["x-ms-global-committed-lsn"]);
    const small = await c.items.create({ id: "s", pk: "p" });
    const big = await c.items.create({ id: "b", pk: "p", text: "x".repeat(2500) });
    const readSmall = await c.item("s", "p").read();
    const readBig = await c.item("b", "p").read();
    const replaced = await c.item("s", "p").replace({ id: "s", pk: "p", v: 2 });
    const deleted = await c.item("s", "p").delete();
    const query = await c.items.query("SELECT * FROM c", { partitionKey: "p" }).fetchAll();
    return {
      charges: { create: small.requestCharge, createBig: big.requestCharge, read: readSmall.requestCharge, readBig: readBig.requestCharge,
        replace: replaced.requestCharge, delete: deleted.requestCharge, query: query.requestCharge },
      lsns: [lsn(small), lsn(big), lsn(readBig), lsn(replaced), lsn(deleted)],
      committedSame: [small, big, readBig, replaced, deleted].every((r) => committed(r) === lsn(r)),
    };
  },


  // Resource tokens (CO-8): a user's permissions hand out tokens, and a
  // client made with them (resourceTokens, or permissionFeed) reads and
  // writes what they grant and is refused elsewhere; the tokens last
  // resourceTokenExpirySeconds on lapse's clock.
  async "resource-tokens"(client, a) {
    const c = await pkContainer(client);
    const { database } = await client.database("db").read();
    const { container: other } = await database.containers.create({ id: "other", partitionKey: { paths: ["/pk"] } });
    await other.items.create({ id: "o", pk: "p" });
    const { user } = await database.users.create({ id: "u" });
    const { resource: all } = await user.permissions.create(
      { id: "all", permissionMode: PermissionMode.All, resource: c.url }, { resourceTokenExpirySeconds: 600 });
    const { resource: read } = await user.permissions.create(
      { id: "read", permissionMode: PermissionMode.Read, resource: other.url }, { resourceTokenExpirySeconds: 600 });
    const { resources: listed } = await user.permissions.readAll().fetchAll();
    const out = { permissions: sorted(ids(listed)), listedTokens: listed.every((p) => typeof p._token === "string") };

    const endpoint = a.endpoint;
    const tokens = new CosmosClient({ endpoint, resourceTokens: { [c.url]: all._token } });
    const feed = new CosmosClient({ endpoint, permissionFeed: [read] });
    try {
      const tc = tokens.database("db").container("c");
      out.create = (await tc.items.create({ id: "x", pk: "p", v: 1 })).statusCode;
      out.read = (await tc.item("x", "p").read()).resource?.v;
      out.upsert = (await tc.items.upsert({ id: "x", pk: "p", v: 2 })).statusCode;
      const { resources: rows } = await tc.items.query("SELECT * FROM c", { partitionKey: "p" }).fetchAll();
      out.query = ids(rows);
      // Elsewhere: the SDK has no token for the other container, and the
      // read-only permission's client cannot write there.
      out.otherContainer = await failure(() => tokens.database("db").container("other").item("o", "p").read());
      const fo = feed.database("db").container("other");
      out.feedRead = (await fo.item("o", "p").read()).resource?.id;
      out.feedWrite = await failure(() => fo.items.create({ id: "n", pk: "p" }));
      out.databases = await failure(() => feed.databases.readAll().fetchAll());

      await advance(a.control, "599s");
      out.at599 = (await tc.item("x", "p").read()).statusCode;
      await advance(a.control, "1s");
      out.at600 = await failure(() => tc.item("x", "p").read());
      out.feedAt600 = await failure(() => fo.item("o", "p").read());
      // A new token from the permission serves again.
      const { resource: again } = await user.permission("all").read();
      const renewed = new CosmosClient({ endpoint, resourceTokens: { [c.url]: again._token } });
      try {
        out.renewed = (await renewed.database("db").container("c").item("x", "p").read()).resource?.v;
      } finally {
        renewed.dispose();
      }
    } finally {
      tokens.dispose();
      feed.dispose();
    }
    return out;
  },
  // A container with a uniqueKeyPolicy: a second item with the same email
  // in a partition is 409, the same email in another partition is stored,
  // and the policy reads back as it was created.
  "unique-keys": async (client) => {
    const c = await pkContainer(client, { uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] } });
    const first = await c.items.create({ id: "a", pk: "p1", email: "a@x" });
    let message = "";
    const duplicate = await failure(async () => {
      try {
        await c.items.create({ id: "b", pk: "p1", email: "a@x" });
      } catch (err) {
        message = String(err?.body?.message ?? err?.message ?? "");
        throw err;
      }
    });
    const otherPartition = await c.items.create({ id: "b", pk: "p2", email: "a@x" });
    const { resource } = await c.read();
    return {
      first: first.statusCode, duplicate, uniqueMessage: message.includes("Unique index constraint violation."),
      otherPartition: otherPartition.statusCode, policy: resource.uniqueKeyPolicy,
    };
  },

  // Server-side JavaScript (issue 28): a stored procedure that creates two
  // items and reads them back in one transaction, one that throws after a
  // create (nothing written), a pre-trigger that changes the body, and a
  // user-defined function in a query.
  async scripts(client) {
    const c = await pkContainer(client);
    await c.scripts.storedProcedures.create({
      id: "two",
      body: `function (prefix, fail) {
        var coll = getContext().getCollection();
        coll.createDocument(coll.getSelfLink(), { id: prefix + "1", pk: "p" });
        coll.createDocument(coll.getSelfLink(), { id: prefix + "2", pk: "p" });
        coll.queryDocuments(coll.getSelfLink(), "SELECT VALUE r.id FROM r", function (err, ids) {
          if (err) throw err;
          if (fail) throw new Error("asked to fail");
          getContext().getResponse().setBody(ids);
        });
      }`,
    });
    const { resource: ids } = await c.scripts.storedProcedure("two").execute("p", ["a", false]);
    const thrown = await failure(() => c.scripts.storedProcedure("two").execute("p", ["b", true]));
    const { resources: afterThrow } = await c.items.query("SELECT VALUE r.id FROM r WHERE STARTSWITH(r.id, 'b')").fetchAll();
    await c.scripts.triggers.create({
      id: "upper", triggerType: "Pre", triggerOperation: "Create",
      body: `function () {
        var r = getContext().getRequest(), item = r.getBody();
        item.id = item.id.toUpperCase();
        r.setBody(item);
      }`,
    });
    const { resource: upper } = await c.items.create({ id: "low", pk: "p", n: 3 }, { preTriggerInclude: ["upper"] });
    await c.scripts.userDefinedFunctions.create({ id: "double", body: "function (x) { return x * 2; }" });
    const { resources: doubled } = await c.items.query("SELECT VALUE udf.double(r.n) FROM r WHERE IS_DEFINED(r.n)").fetchAll();
    const { resources: sprocs } = await c.scripts.storedProcedures.readAll().fetchAll();
    return { ids, thrown, afterThrow, upperId: upper.id, doubled, sprocs: sprocs.map((s) => s.id) };
  },

};

async function main() {
  const a = args(process.argv.slice(2));
  if (!a.endpoint || !a.key || a.names.length === 0) {
    console.error(`usage: node scenarios.mjs SCENARIO... [--endpoint URL] [--key KEY] [--control URL]\nscenarios: ${Object.keys(scenarios).join(", ")}`);
    process.exit(2);
  }
  for (const name of a.names) {
    const run = scenarios[name];
    if (!run) throw new Error(`unknown scenario ${JSON.stringify(name)}`);
    const client = new CosmosClient({ endpoint: a.endpoint, key: a.key });
    try {
      const result = await run(client, a);
      console.log(JSON.stringify({ scenario: name, ...result }));
    } finally {
      client.dispose();
    }
  }
}

main().catch((err) => {
  console.error(err?.stack ?? String(err));
  if (err?.body) console.error(JSON.stringify(err.body));
  process.exit(1);
});

"""Scenarios that drive lapse's Cosmos DB front-end with the current
azure-cosmos 4.x for Python (the azure.cosmos.CosmosClient API),
unmodified but for the endpoint and key. cosmos/python4_test.go runs one
scenario per run against a fresh server and checks the one JSON line it
prints, {"scenario": NAME, ...what it saw}; a failure ends the run with its
error on stderr and a non-zero exit status.

    python scenarios.py SCENARIO

The endpoint comes from COSMOS_ENDPOINT, the key from COSMOS_KEY, and the
control URL (POST /advance?by=60s moves the server's frozen clock) from
LAPSE_CONTROL_URL.
"""

import json
import os
import sys
import urllib.parse
import urllib.request

from azure.cosmos import CosmosClient, PartitionKey, exceptions


def client():
    return CosmosClient(os.environ["COSMOS_ENDPOINT"], credential=os.environ["COSMOS_KEY"])


def status(f):
    """The HTTP status of the error f raises, 0 when it raises none."""
    try:
        f()
    except exceptions.CosmosHttpResponseError as e:
        return e.status_code
    return 0


def ids(docs):
    return [d["id"] for d in docs]


def seeded():
    """A container with items i00..i11: i 0..11, pk p0..p2 (i mod 3)
    and parity even or odd, as the JS scenarios' seed, and a composite
    index for ORDER BY c.parity, c.i DESC."""
    db = client().create_database("db")
    c = db.create_container("c", partition_key=PartitionKey(path="/pk"), indexing_policy={
        "compositeIndexes": [[{"path": "/parity", "order": "ascending"}, {"path": "/i", "order": "descending"}]]})
    for i in range(12):
        c.create_item({"id": "i%02d" % i, "pk": "p%d" % (i % 3), "i": i, "parity": "odd" if i % 2 else "even"})
    return c


def crud():
    c = seeded()
    out = {"read": c.read_item("i04", partition_key="p1")["i"]}
    out["readOtherPartition"] = status(lambda: c.read_item("i04", partition_key="p0"))
    out["createDuplicate"] = status(lambda: c.create_item({"id": "i04", "pk": "p1"}))
    item = c.read_item("i04", partition_key="p1")
    item["i"] = 40
    c.replace_item("i04", item)
    out["replaced"] = c.read_item("i04", partition_key="p1")["i"]
    c.upsert_item({"id": "new", "pk": "p1", "i": 99})
    c.delete_item("i05", partition_key="p2")
    out["readDeleted"] = status(lambda: c.read_item("i05", partition_key="p2"))
    out["partition"] = sorted(ids(c.query_items("SELECT * FROM c", partition_key="p1")))
    return out


def queries():
    # Issue 26: cross-partition queries through the SDK's own query
    # pipeline (enable_cross_partition_query), and pages as the SDK reads
    # them.
    c = seeded()

    def q(text, **kw):
        return list(c.query_items(text, enable_cross_partition_query=True, **kw))

    pages = [len(list(p)) for p in c.query_items(
        "SELECT * FROM c WHERE c.parity = 'even'", enable_cross_partition_query=True,
        max_item_count=3).by_page()]
    return {
        "orderBy": ids(q("SELECT * FROM c ORDER BY c.i DESC")),
        "orderByTwo": ids(q("SELECT c.id FROM c ORDER BY c.parity ASC, c.i DESC")),
        "count": q("SELECT VALUE COUNT(1) FROM c"),
        "sum": q("SELECT VALUE SUM(c.i) FROM c WHERE c.parity = 'odd'"),
        "avg": q("SELECT VALUE AVG(c.i) FROM c"),
        "min": q("SELECT VALUE MIN(c.i) FROM c WHERE c.i > 4"),
        "max": q("SELECT VALUE MAX(c.id) FROM c"),
        "distinct": sorted(q("SELECT DISTINCT VALUE c.parity FROM c")),
        "offsetLimit": ids(q("SELECT * FROM c ORDER BY c.i OFFSET 3 LIMIT 4")),
        "top": ids(q("SELECT TOP 3 * FROM c ORDER BY c.i DESC")),
        "params": ids(q("SELECT * FROM c WHERE c.i >= @min ORDER BY c.i",
                        parameters=[{"name": "@min", "value": 10}])),
        "pages": pages,
        # The SDK's pipeline has no GROUP BY: the gateway refuses the plan.
        "groupBy": status(lambda: q("SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk")),
    }


def ranges():
    # Issue 26.2: a container of 25,100 RU/s has five partition key
    # ranges; the SDK's pipeline queries each and merges, and its feed
    # ranges' change feeds hold each item once.
    db = client().create_database("db")
    c = db.create_container("c", partition_key=PartitionKey(path="/pk"), offer_throughput=25100)
    for i in range(30):
        c.create_item({"id": "i%02d" % i, "pk": "k%d" % (i % 10), "i": i})

    def q(text):
        return list(c.query_items(text, enable_cross_partition_query=True))

    feed_ranges = list(c.read_feed_ranges())
    per_range = [len(list(c.query_items_change_feed(feed_range=fr, start_time="Beginning"))) for fr in feed_ranges]
    return {
        "feedRanges": len(feed_ranges),
        "perRange": sum(per_range),
        "rangesUsed": len([n for n in per_range if n > 0]),
        "orderBy": q("SELECT VALUE c.i FROM c ORDER BY c.i DESC")[:5],
        "count": q("SELECT VALUE COUNT(1) FROM c"),
        "min": q("SELECT VALUE MIN(c.i) FROM c"),
        "top": q("SELECT TOP 3 VALUE c.i FROM c ORDER BY c.i"),
        "distinct": len(q("SELECT DISTINCT VALUE c.pk FROM c")),
        "offsetLimit": q("SELECT VALUE c.i FROM c ORDER BY c.i OFFSET 28 LIMIT 5"),
        "all": len(q("SELECT * FROM c")),
    }


def gateway():
    # Issue 26: a query that would cross partitions without leave is the
    # caller's error, not the SDK's to plan around; a point read names its
    # range, so the SDK keeps its cache of the container's ranges.
    c = seeded()
    db = client().get_database_client("db")
    wide = db.create_container("wide", partition_key=PartitionKey(path="/pk"), offer_throughput=12000)
    wide.create_item({"id": "x", "pk": "k"})
    wide.read_item("x", partition_key="k")
    ranges_cached = len(wide.client_connection._routing_map_provider._collection_routing_map_by_item)
    wide.read_item("x", partition_key="k")
    # A transactional batch's writes take one LSN, the next of the
    # partition's, which its answer carries.
    before = int(c.read_item("i01", partition_key="p1").get_response_headers()["lsn"])
    batch = c.execute_item_batch([
        ("create", ({"id": "b1", "pk": "p1"},)),
        ("upsert", ({"id": "b2", "pk": "p1"},)),
        ("replace", ("i04", {"id": "i04", "pk": "p1", "i": 44})),
        ("read", ("i07",)),
        ("delete", ("i10",)),
    ], partition_key="p1")
    return {
        "batchLSN": int(batch.get_response_headers()["lsn"]) - before,
        "crossPartitionDisabled": status(lambda: list(c.query_items("SELECT * FROM c"))),
        "conflictsDisabled": status(lambda: list(c.query_conflicts("SELECT * FROM c"))),
        "crossPartitionAllowed": len(list(c.query_items("SELECT * FROM c", enable_cross_partition_query=True))),
        "onePartition": len(list(c.query_items("SELECT * FROM c", partition_key="p1"))),
        "readRange": wide.client_connection.last_response_headers.get("x-ms-documentdb-partitionkeyrangeid"),
        "rangesCached": ranges_cached,
    }


# The items and queries of hybrid_search, as in the JS scenario
# "hybrid-search"; cosmos/hybrid_test.go runs the queries whole in lapse
# for the answer.
HYBRID_DOCS = [
    {"text": "swim lake morning cold", "v": [1, 0, 0]},
    {"text": "run river swim evening easy pace", "v": [0.9, 0.1, 0]},
    {"text": "marathon run training plan beginners weekly schedule", "v": [0, 1, 0]},
    {"text": "swim swim swim lake warm", "v": [0.7, 0.7, 0]},
    {"text": "cycling hills", "v": [0, 0, 1]},
    {"text": "trail run hills rain mud shoes wet feet", "v": [0.2, 0.9, 0.1]},
    {"text": "pool opens early morning swim lessons kids parents coaches", "v": [0.8, 0.2, 0.3]},
    {"text": "nothing", "v": [0.1, 0.1, 0.9]},
    {"text": "run swim cycle triathlon race day transition bikes helmets goggles", "v": [0.5, 0.5, 0.5]},
    {"text": "river runs lake", "v": [0.6, 0, 0.4]},
    {"v": [1, 1, 0]},
    {"text": "long swim across bay currents tides cold water safety boats buoys", "v": [0.95, 0.05, 0.1]},
    {"text": "morning run dog park leash", "v": [0.1, 0.95, 0]},
    {"text": "lake house rent summer weekends family"},
]
HYBRID_QUERIES = {
    "score": 'SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, "swim", "lake")',
    "scoreOffset": 'SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ["run"]) OFFSET 1 LIMIT 3',
    "rrfValue": 'SELECT TOP 4 VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), FullTextScore(c.text, "lake"))',
    "weighted": 'SELECT TOP 4 c.id FROM c WHERE c.id != "h00" ORDER BY RANK '
                'RRF(FullTextScore(c.text, "run"), FullTextScore(c.text, "hills"), [2, 1])',
    "vector": 'SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim"), VectorDistance(c.v, [1, 0, 0]))',
    "vectorOnly": 'SELECT TOP 3 c.id FROM c ORDER BY RANK VectorDistance(c.v, [0, 1, 0])',
}


def hybrid_search():
    # Issue 26: hybrid search on five partition key ranges, through the
    # SDK's hybrid search pipeline (the gateway refuses the query with
    # its plan).
    db = client().create_database("db")
    c = db.create_container(
        "c", partition_key=PartitionKey(path="/pk"), offer_throughput=25100,
        full_text_policy={"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/text", "language": "en-US"}]},
        indexing_policy={"includedPaths": [{"path": "/*"}], "fullTextIndexes": [{"path": "/text"}]})
    for i, d in enumerate(HYBRID_DOCS):
        c.create_item(dict(d, id="h%02d" % i, pk="k%d" % (i % 7)))
    results = {name: list(c.query_items(text, enable_cross_partition_query=True))
               for name, text in HYBRID_QUERIES.items()}
    return {"queries": HYBRID_QUERIES, "results": results}


def advance(by):
    """Moves the server's clock on by (a Go duration, "60s")."""
    req = urllib.request.Request(os.environ["LAPSE_CONTROL_URL"] + "/advance?by=" + by, method="POST")
    urllib.request.urlopen(req).read()


def change(row):
    """A row of the all-versions-and-deletes feed, in short: its operation,
    the id (of the document written, or of the one deleted), the metadata's
    numbers compared with the documents' _lsn, and whether a TTL did it."""
    meta = row["metadata"]
    out = {"op": meta["operationType"], "hasCrts": isinstance(meta.get("crts"), int)}
    if meta["operationType"] == "delete":
        out["id"] = meta["id"]
        out["pk"] = meta["partitionKey"]
        out["ttlExpired"] = meta["timeToLiveExpired"]
        out["current"] = row["current"]
    else:
        out["id"] = row["current"]["id"]
        out["v"] = row["current"].get("v")
        out["lsnIsDocs"] = meta["lsn"] == row["current"]["_lsn"]
    out["previousImageLSN"] = meta.get("previousImageLSN")
    out["lsn"] = meta["lsn"]
    return out


def all_versions():
    """The change feed in all-versions-and-deletes mode, from now on: a
    create, a replace, a client's delete and an expiry each appear once,
    in order, for the whole container, one partition key and one feed
    range (CO-6, CO-9: an expiry is a delete with timeToLiveExpired, at
    the instant it expired on lapse's clock)."""
    db = client().create_database("db")
    c = db.create_container("c", partition_key=PartitionKey(path="/pk"), default_ttl=-1, offer_throughput=25100)
    mode = "AllVersionsAndDeletes"

    def feed(**kw):
        rows = list(c.query_items_change_feed(mode=mode, **kw))
        return rows, c.client_connection.last_response_headers["etag"]

    # The feed range that holds key "q" and not "p".
    ranges = list(c.read_feed_ranges())
    rng = next(r for r in ranges if c.is_feed_range_subset(r, c.feed_range_from_partition_key("q")))
    p_in_rng = c.is_feed_range_subset(rng, c.feed_range_from_partition_key("p"))

    _, whole = feed()
    _, part = feed(partition_key="p")
    _, ranged = feed(feed_range=rng)

    a = c.create_item({"id": "a", "pk": "p", "v": 1})
    b = c.create_item({"id": "b", "pk": "q", "v": 1, "ttl": 60})
    a["v"] = 2
    c.replace_item("a", a)
    c.delete_item(c.read_item("a", partition_key="p"), partition_key="p")
    advance("90s")  # past the expiry: the feed must list it at its own instant

    rows, whole2 = feed(continuation=whole)
    out = {"whole": [change(r) for r in rows], "pInRange": p_in_rng}
    # CO-9: the expiry is listed at its instant, 60 s after b was written.
    out["expiredAfter"] = [r["metadata"]["crts"] - b["_ts"] for r in rows
                           if r["metadata"]["operationType"] == "delete" and r["metadata"]["timeToLiveExpired"]]
    out["partition"] = [change(r) for r in feed(continuation=part)[0]]
    out["range"] = [change(r) for r in feed(continuation=ranged)[0]]
    # Nothing new since: an empty page.
    out["again"] = len(feed(continuation=whole2)[0])
    return out


# The scripts of the scripts scenario, our own: a procedure that creates
# the items it is given in its partition and says how many, one that writes
# and then throws, a pre-trigger that stamps the item it runs for, one that
# refuses every write, and a UDF.
CREATE_ALL = """function createAll(items) {
    var coll = getContext().getCollection();
    var n = 0;
    items.forEach(function (it) {
        if (!coll.createDocument(coll.getSelfLink(), it, function (err) { if (err) throw err; })) {
            throw new Error("not accepted");
        }
        n++;
    });
    console.log("created " + n);
    getContext().getResponse().setBody({created: n});
}"""

WRITE_THEN_FAIL = """function writeThenFail(id) {
    var coll = getContext().getCollection();
    coll.createDocument(coll.getSelfLink(), {id: id, pk: "p", i: 0}, function (err) {
        if (err) throw err;
        throw new Error("boom after " + id);
    });
}"""

STAMP = """function stamp() {
    var req = getContext().getRequest();
    var doc = req.getBody();
    doc.stamped = true;
    req.setBody(doc);
}"""

REFUSE = """function refuse() {
    throw new Error("refused by trigger");
}"""


def partition_ids(c, pk):
    return sorted(ids(c.query_items("SELECT * FROM c", partition_key=pk)))


def scripts():
    """Stored procedures, triggers and a UDF through container.scripts
    (issue 28.1): a procedure's writes commit together, and none when it
    throws; its console output comes back when asked for
    (enable_script_logging); a pre-trigger changes the item it runs for,
    one that throws refuses the write; a UDF runs in a query."""
    db = client().create_database("db")
    c = db.create_container("c", partition_key=PartitionKey(path="/pk"))
    s = c.scripts
    s.create_stored_procedure({"id": "createAll", "body": CREATE_ALL})
    s.create_stored_procedure({"id": "writeThenFail", "body": WRITE_THEN_FAIL})
    items = [{"id": "x%d" % i, "pk": "p", "i": i} for i in (1, 2, 3)]
    out = {"executed": s.execute_stored_procedure("createAll", partition_key="p", params=[items],
                                                  enable_script_logging=True)}
    headers = c.client_connection.last_response_headers
    out["log"] = urllib.parse.unquote(headers.get("x-ms-documentdb-script-log-results", ""))
    out["failed"] = status(lambda: s.execute_stored_procedure("writeThenFail", partition_key="p", params=["x9"]))
    out["afterSprocs"] = partition_ids(c, "p")
    out["sprocs"] = sorted(p["id"] for p in s.list_stored_procedures())

    s.create_trigger({"id": "stamp", "body": STAMP, "triggerType": "Pre", "triggerOperation": "Create"})
    s.create_trigger({"id": "refuse", "body": REFUSE, "triggerType": "Pre", "triggerOperation": "All"})
    c.create_item({"id": "t1", "pk": "q", "i": 1}, pre_trigger_include="stamp")
    out["stamped"] = c.read_item("t1", partition_key="q").get("stamped", False)
    out["refused"] = status(lambda: c.create_item({"id": "t2", "pk": "q", "i": 2}, pre_trigger_include="refuse"))
    out["afterTriggers"] = partition_ids(c, "q")

    s.create_user_defined_function({"id": "twice", "body": "function twice(x) { return x * 2; }"})
    out["udf"] = list(c.query_items("SELECT VALUE udf.twice(c.i) FROM c WHERE c.pk = 'p' ORDER BY c.i",
                                    partition_key="p"))
    return out


def tokens():
    """Users, permissions and their resource tokens (issue 28.2): a client
    given a Read token of one container (credential={link: token}) reads
    and queries it, is refused a write there and a read of another
    container; one given an All token writes; both are refused once lapse's
    clock has moved past the tokens' hour (CO-8)."""
    db = client().create_database("db")
    ro = db.create_container("ro", partition_key=PartitionKey(path="/pk"))
    rw = db.create_container("rw", partition_key=PartitionKey(path="/pk"))
    ro.create_item({"id": "a", "pk": "p", "i": 1})
    u = db.create_user({"id": "u"})
    perm_ro = u.create_permission({"id": "read-ro", "permissionMode": "Read", "resource": ro.container_link}).properties
    perm_rw = u.create_permission({"id": "all-rw", "permissionMode": "All", "resource": rw.container_link}).properties
    out = {"tokens": len([p for p in (perm_ro, perm_rw) if p.get("_token")])}

    def token_client(perm):
        return CosmosClient(os.environ["COSMOS_ENDPOINT"], credential={perm["resource"]: perm["_token"]})

    read_only = token_client(perm_ro).get_database_client("db")
    read_write = token_client(perm_rw).get_database_client("db")
    ro_t, rw_t = read_only.get_container_client("ro"), read_write.get_container_client("rw")
    out["read"] = ro_t.read_item("a", partition_key="p")["i"]
    out["query"] = len(list(ro_t.query_items("SELECT * FROM c", partition_key="p")))
    out["writeReadOnly"] = status(lambda: ro_t.create_item({"id": "b", "pk": "p", "i": 2}))
    out["readOther"] = status(lambda: read_only.get_container_client("rw").read_item("c", partition_key="p"))
    out["writeAll"] = status(lambda: rw_t.create_item({"id": "c", "pk": "p", "i": 3}))
    out["readAll"] = rw_t.read_item("c", partition_key="p")["i"]
    advance("3601s")  # past the tokens' lifetime, one hour by default (CO-8)
    out["readExpired"] = status(lambda: ro_t.read_item("a", partition_key="p"))
    out["writeExpired"] = status(lambda: rw_t.create_item({"id": "d", "pk": "p", "i": 4}))
    return out


def unique_keys():
    """A unique key policy (issue 28.3): a second item with the same email
    in the same partition key is refused with 409, by a create and by an
    upsert; another partition key takes it; a replace frees the old value;
    an expired item frees its value at once (CO-1)."""
    db = client().create_database("db")
    c = db.create_container("c", partition_key=PartitionKey(path="/pk"), default_ttl=-1,
                            unique_key_policy={"uniqueKeys": [{"paths": ["/email"]}]})

    def person(id_, email, pk="p"):
        return {"id": id_, "pk": pk, "email": email}

    out = {"policy": c.read()["uniqueKeyPolicy"]["uniqueKeys"][0]["paths"]}
    c.create_item(person("a", "x@example.com"))
    out["duplicate"] = status(lambda: c.create_item(person("b", "x@example.com")))
    out["otherPartition"] = status(lambda: c.create_item(person("b", "x@example.com", pk="q")))
    out["upsertDuplicate"] = status(lambda: c.upsert_item(person("b", "x@example.com")))
    c.replace_item("a", person("a", "y@example.com"))
    out["afterReplace"] = status(lambda: c.create_item(person("b", "x@example.com")))
    brief = person("e", "z@example.com")
    brief["ttl"] = 10
    c.create_item(brief)
    out["beforeExpiry"] = status(lambda: c.create_item(person("f", "z@example.com")))
    advance("11s")
    out["afterExpiry"] = status(lambda: c.create_item(person("f", "z@example.com")))
    out["ids"] = partition_ids(c, "p")
    return out


SCENARIOS = {"crud": crud, "queries": queries, "ranges": ranges, "gateway": gateway,
             "hybrid_search": hybrid_search, "all-versions": all_versions,
             "scripts": scripts, "tokens": tokens, "unique-keys": unique_keys}

if __name__ == "__main__":
    name = sys.argv[1]
    out = {"scenario": name}
    out.update(SCENARIOS[name]())
    print(json.dumps(out))

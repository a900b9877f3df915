"""Scenarios that drive lapse's Cosmos DB front-end with Debian's
azure-cosmos 3.1.1 (the cosmos_client.CosmosClient API of the 3.x SDK),
unmodified: the endpoint and key as given, the default connection policy
(endpoint discovery on). cosmos/python_test.go runs one scenario per run
against a fresh server and checks the one JSON line it prints,
{"scenario": NAME, ...what it saw}; a failure ends the run with its error
on stderr and a non-zero exit status.

    python3 scenarios.py SCENARIO

The endpoint comes from COSMOS_ENDPOINT, the key from COSMOS_KEY, and the
control URL (the Go test's HTTP server whose POST /advance?by=61s moves the
server's frozen clock) from LAPSE_CONTROL_URL.
"""

import json
import os
import sys
import urllib.request

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.errors as errors


def client():
    return cosmos_client.CosmosClient(url_connection=os.environ["COSMOS_ENDPOINT"],
                                      auth={"masterKey": os.environ["COSMOS_KEY"]})


def status(f):
    """The HTTP status of the error f raises, 0 when it raises none."""
    try:
        f()
    except errors.HTTPFailure as e:
        return e.status_code
    return 0


def advance(by):
    req = urllib.request.Request(os.environ["LAPSE_CONTROL_URL"] + "/advance?by=" + by, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        resp.read()


def ids(docs):
    return sorted(d["id"] for d in docs)


def crud():
    c = client()
    db = c.CreateDatabase({"id": "crud"})
    out = {"createDatabaseDuplicate": status(lambda: c.CreateDatabase({"id": "crud"}))}
    out["readDatabase"] = c.ReadDatabase("dbs/crud")["id"]
    out["databases"] = ids(c.ReadDatabases())
    out["queryDatabases"] = ids(c.QueryDatabases({
        "query": "SELECT * FROM r WHERE r.id = @id", "parameters": [{"name": "@id", "value": "crud"}]}))
    definition = {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}
    coll = c.CreateContainer(db["_self"], definition, {"offerThroughput": 400})
    link = "dbs/crud/colls/items"
    out["readContainer"] = c.ReadContainer(link)["partitionKey"]["paths"]
    definition["defaultTtl"] = 3600
    out["replacedDefaultTtl"] = c.ReplaceContainer(link, definition)["defaultTtl"]
    out["containers"] = ids(c.ReadContainers("dbs/crud"))

    created = c.CreateItem(link, {"id": "a", "pk": "p1", "v": 1})
    c.CreateItem(coll["_self"], {"id": "b", "pk": "p2", "v": 1})
    out["createItemDuplicate"] = status(lambda: c.CreateItem(link, {"id": "a", "pk": "p1"}))
    read = c.ReadItem(link + "/docs/a", {"partitionKey": "p1"})
    out["readItem"] = {"v": read["v"], "sameEtag": read["_etag"] == created["_etag"]}
    out["readOtherPartition"] = status(lambda: c.ReadItem(link + "/docs/a", {"partitionKey": "p2"}))
    read["v"] = 2
    replaced = c.ReplaceItem(link + "/docs/a", read)
    out["replaceItem"] = {"v": replaced["v"], "newEtag": replaced["_etag"] != created["_etag"]}
    stale = {"type": "IfMatch", "condition": created["_etag"]}
    out["replaceStale"] = status(lambda: c.ReplaceItem(link + "/docs/a", read, {"accessCondition": stale}))
    out["upsertNew"] = c.UpsertItem(link, {"id": "c", "pk": "p1", "v": 3})["v"]
    out["upsertExisting"] = c.UpsertItem(link, {"id": "c", "pk": "p1", "v": 4})["v"]
    out["queryPartition"] = ids(c.QueryItems(link, "SELECT * FROM c", {"partitionKey": "p1"}))
    out["queryCross"] = ids(c.QueryItems(link, {
        "query": "SELECT * FROM c WHERE c.v >= @v", "parameters": [{"name": "@v", "value": 2}]},
        {"enableCrossPartitionQuery": True}))
    out["readAll"] = ids(c.ReadItems(link))
    c.DeleteItem(link + "/docs/a", {"partitionKey": "p1"})
    out["readDeletedItem"] = status(lambda: c.ReadItem(link + "/docs/a", {"partitionKey": "p1"}))
    c.DeleteContainer(link)
    out["readDeletedContainer"] = status(lambda: c.ReadContainer(link))
    c.DeleteDatabase("dbs/crud")
    out["readDeletedDatabase"] = status(lambda: c.ReadDatabase("dbs/crud"))
    return out


def paged_query():
    """A cross-partition query over 150 items, read page by page."""
    c = client()
    c.CreateDatabase({"id": "paging"})
    link = "dbs/paging/colls/items"
    c.CreateContainer("dbs/paging", {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}})
    for i in range(150):
        c.CreateItem(link, {"id": "item%03d" % i, "pk": "p%d" % (i % 7), "n": i})
    pages = []
    it = c.QueryItems(link, "SELECT * FROM c", {"enableCrossPartitionQuery": True})
    while True:
        block = it.fetch_next_block()
        if not block:
            break
        pages.append(len(block))
    every = list(c.QueryItems(link, "SELECT c.n FROM c", {"enableCrossPartitionQuery": True, "maxItemCount": 40}))
    return {"pages": pages, "count": len(every), "distinct": len({d["n"] for d in every})}


def ttl():
    """CO-4: a container's defaultTtl expires items that many seconds after
    their last write; ttl -1 keeps one. The server's clock moves (no
    sleeping)."""
    c = client()
    c.CreateDatabase({"id": "ttl"})
    link = "dbs/ttl/colls/items"
    c.CreateContainer("dbs/ttl", {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": 60})
    c.CreateItem(link, {"id": "short", "pk": "p"})
    c.CreateItem(link, {"id": "forever", "pk": "p", "ttl": -1})
    query = lambda: ids(c.QueryItems(link, "SELECT * FROM c", {"enableCrossPartitionQuery": True}))
    out = {"before": query()}
    advance("59s")
    out["readAt59"] = status(lambda: c.ReadItem(link + "/docs/short", {"partitionKey": "p"}))
    advance("2s")
    out["readAt61"] = status(lambda: c.ReadItem(link + "/docs/short", {"partitionKey": "p"}))
    out["after"] = query()
    out["readForever"] = c.ReadItem(link + "/docs/forever", {"partitionKey": "p"})["id"]
    return out


def https():
    """Over HTTPS with the server's certificate trusted through
    REQUESTS_CA_BUNDLE, as a user of requests trusts one; without it the
    same call fails on the certificate."""
    bundle = os.environ.pop("REQUESTS_CA_BUNDLE")
    untrusted = "no error"
    try:
        client().ReadDatabases()
    except Exception as e:  # requests' SSLError, through the SDK's retries
        untrusted = type(e).__name__
    os.environ["REQUESTS_CA_BUNDLE"] = bundle
    c = client()
    c.CreateDatabase({"id": "tls"})
    link = "dbs/tls/colls/items"
    c.CreateContainer("dbs/tls", {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}})
    c.CreateItem(link, {"id": "a", "pk": "p", "v": 1})
    return {
        "untrusted": untrusted,
        "read": c.ReadItem(link + "/docs/a", {"partitionKey": "p"})["v"],
        "query": ids(c.QueryItems(link, "SELECT * FROM c", {"enableCrossPartitionQuery": True})),
    }


SCENARIOS = {"crud": crud, "paged-query": paged_query, "ttl": ttl, "https": https}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        sys.exit("usage: python3 scenarios.py {%s}" % "|".join(SCENARIOS))
    name = sys.argv[1]
    out = {"scenario": name}
    out.update(SCENARIOS[name]())
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()

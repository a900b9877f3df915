"""The Cosmos DB example of lapse's README, with azure-cosmos for Python
(the 3.x API, Debian's 3.1.1): it writes an item to the container "carts" of
the database "shop" (declared by examples/config/cosmos.json: partition key
/userId, defaultTtl 3600 seconds), reads it, moves lapse's clock 61 minutes
and reads it again: 404, it expired.

    python3 examples/cosmos/python/main.py
"""

import json
import os
import urllib.request

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.errors as errors

ENDPOINT = os.environ.get("COSMOS_ENDPOINT", "http://localhost:8081/")
CONTROL = os.environ.get("LAPSE_CONTROL_URL", "http://localhost:8080")
# The official Cosmos DB emulator's well-known key, which lapse takes too.
KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

client = cosmos_client.CosmosClient(url_connection=ENDPOINT, auth={"masterKey": KEY})
carts = "dbs/shop/colls/carts"
client.UpsertItem(carts, {"id": "cart1", "userId": "u1", "items": ["book"]})
client.ReadItem(carts + "/docs/cart1", {"partitionKey": "u1"})
print("read cart1: found")

# The control API moves lapse's clock; it answers once every expiry due by
# then is applied.
req = urllib.request.Request(CONTROL + "/api/clock/advance", data=json.dumps({"by": "61m"}).encode(), method="POST")
urllib.request.urlopen(req).close()
print("clock advanced 61m")

try:
    client.ReadItem(carts + "/docs/cart1", {"partitionKey": "u1"})
    print("read cart1: found")
except errors.HTTPFailure as e:
    if e.status_code != 404:
        raise
    print("read cart1: 404 Not Found")

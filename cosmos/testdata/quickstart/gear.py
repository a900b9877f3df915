"""lapse's own program of the flow of Microsoft's Python quickstart for
Azure Cosmos DB for NoSQL (azure-cosmos 4.x): create the database and the
container if they are missing, upsert items, read one by id and partition
key, query a partition with a parameter, a page at a time.

The endpoint and key come from COSMOS_ENDPOINT and COSMOS_KEY; the
emulator's certificate is trusted through REQUESTS_CA_BUNDLE.
"""

import os

from azure.cosmos import CosmosClient, PartitionKey

client = CosmosClient(os.environ["COSMOS_ENDPOINT"], credential=os.environ["COSMOS_KEY"])
database = client.create_database_if_not_exists(id="outfitter")
container = database.create_container_if_not_exists(id="gear", partition_key=PartitionKey(path="/category"))
print("ready: %s/%s" % (database.id, container.id))

for item in (
    {"id": "g1", "category": "tents", "name": "ridge tent", "quantity": 4},
    {"id": "g2", "category": "stoves", "name": "canister stove", "quantity": 9},
    {"id": "g3", "category": "stoves", "name": "wood stove", "quantity": 2},
):
    saved = container.upsert_item(item)
    print("upserted %s (%s)" % (saved["id"], saved["name"]))

one = container.read_item(item="g1", partition_key="tents")
print("read g1: %s, %d left" % (one["name"], one["quantity"]))

pages = container.query_items(
    query="SELECT * FROM c WHERE c.category = @category ORDER BY c.name",
    parameters=[{"name": "@category", "value": "stoves"}],
    partition_key="stoves",
    max_item_count=1,
).by_page()
for n, page in enumerate(pages, start=1):
    for item in page:
        print("stoves, page %d: %s %s" % (n, item["id"], item["name"]))

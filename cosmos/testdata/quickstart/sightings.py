"""lapse's own program of the flow of Microsoft's getting-started program
for Azure Cosmos DB with the Python SDK 3.x (azure-cosmos 3): through
$COSMOS_ENDPOINT and $COSMOS_KEY it creates the database observatory and
its container sightings without a partition key (400 RU/s), addressing
each by its _self link, adds three items and queries them across
partitions, two a page.

cosmos/quickstart_test.go runs it; docs/examples.md names the program it
follows.
"""

import os

import azure.cosmos.cosmos_client as cosmos_client

client = cosmos_client.CosmosClient(url_connection=os.environ["COSMOS_ENDPOINT"],
                                    auth={"masterKey": os.environ["COSMOS_KEY"]})
database = client.CreateDatabase({"id": "observatory"})
container = client.CreateContainer(database["_self"], {"id": "sightings"}, {"offerThroughput": 400})

for n, (body, night) in enumerate([("Mars", 1), ("Jupiter", 1), ("Saturn", 2)], start=1):
    client.CreateItem(container["_self"], {"id": f"s{n}", "body": body, "night": night})

pages = client.QueryItems(container["_self"], {"query": "SELECT s.id, s.body FROM s"},
                          {"enableCrossPartitionQuery": True, "maxItemCount": 2})
page = pages.fetch_next_block()
while page:
    print("page:", ", ".join(f"{s['id']} {s['body']}" for s in page))
    page = pages.fetch_next_block()

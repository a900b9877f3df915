// lapse's own program of the flow of Microsoft's Node.js quickstart for
// Azure Cosmos DB for NoSQL, with @azure/cosmos and the account key:
// through $COSMOS_ENDPOINT and $COSMOS_KEY it makes sure the database
// garden and its container plants (partition key /bed) exist, creates
// three items, reads one by id and partition key, queries one bed a page
// of one item at a time, and deletes an item.
//
// cosmos/quickstart_test.go runs it; docs/examples.md names the
// quickstart.
const { CosmosClient } = require("@azure/cosmos");

const plants = [
  { id: "p1", bed: "north", name: "rosemary", height: 60 },
  { id: "p2", bed: "south", name: "basil", height: 30 },
  { id: "p3", bed: "south", name: "thyme", height: 20 },
];

async function main() {
  const client = new CosmosClient({ endpoint: process.env.COSMOS_ENDPOINT, key: process.env.COSMOS_KEY });
  const { database } = await client.databases.createIfNotExists({ id: "garden" });
  const { container } = await database.containers.createIfNotExists({ id: "plants", partitionKey: { paths: ["/bed"] } });
  console.log(`ready: ${database.id}/${container.id}`);

  for (const plant of plants) {
    const { resource, statusCode } = await container.items.create(plant);
    console.log(`created ${resource.id} (${resource.name}): ${statusCode}`);
  }

  const { resource: first } = await container.item("p1", "north").read();
  console.log(`read p1: ${first.name}, ${first.height} cm, ${first.bed} bed`);

  const query = container.items.query(
    { query: "SELECT p.id, p.name FROM p WHERE p.bed = @bed", parameters: [{ name: "@bed", value: "south" }] },
    { maxItemCount: 1 },
  );
  for (let page = 1; query.hasMoreResults(); page++) {
    const { resources } = await query.fetchNext();
    if (resources.length === 0) continue;
    console.log(`south bed, page ${page}: ${resources.map((p) => `${p.id} ${p.name}`).join(", ")}`);
  }

  const { statusCode } = await container.item("p3", "south").delete();
  console.log(`deleted p3: ${statusCode}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

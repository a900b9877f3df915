// The Cosmos DB example of lapse's README, with the official JS SDK: it
// writes an item to the container "carts" of the database "shop" (declared
// by examples/config/cosmos.json: partition key /userId, defaultTtl 3600
// seconds), reads it, moves lapse's clock 61 minutes and reads it again:
// 404, it expired.
//
//   npm ci --prefix examples/cosmos/js && node examples/cosmos/js/main.js
import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT ?? "http://localhost:8081/";
const control = process.env.LAPSE_CONTROL_URL ?? "http://localhost:8080";
// The official Cosmos DB emulator's well-known key, which lapse takes too.
const key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

const client = new CosmosClient({ endpoint, key });
const carts = client.database("shop").container("carts");
await carts.items.upsert({ id: "cart1", userId: "u1", items: ["book"] });
const before = await carts.item("cart1", "u1").read();
console.log(`read cart1: ${before.resource ? "found" : before.statusCode}`);

// The control API moves lapse's clock; it answers once every expiry due by
// then is applied.
await fetch(`${control}/api/clock/advance`, { method: "POST", body: JSON.stringify({ by: "61m" }) });
console.log("clock advanced 61m");

const after = await carts.item("cart1", "u1").read();
console.log(`read cart1: ${after.resource ? "found" : `${after.statusCode} Not Found`}`);

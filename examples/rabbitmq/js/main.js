// The RabbitMQ example of lapse's README, with amqplib: it publishes a
// message to the queue "orders" (declared by examples/config/definitions.json:
// x-message-ttl 1 hour, dead-lettered to "orders.expired"), moves lapse's
// clock 61 minutes and gets the message from "orders.expired" with its
// x-death header.
//
//   npm ci --prefix examples/rabbitmq/js && node examples/rabbitmq/js/main.js
import amqp from "amqplib";

const url = process.env.RABBITMQ_URL ?? "amqp://guest:guest@localhost:5672/";
const control = process.env.LAPSE_CONTROL_URL ?? "http://localhost:8080";

const conn = await amqp.connect(url);
// A confirmed publish is in the queue before the clock moves.
const ch = await conn.createConfirmChannel();
ch.sendToQueue("orders", Buffer.from("order 1"));
await ch.waitForConfirms();
console.log("published: order 1");

// The control API moves lapse's clock; it answers once every expiry due by
// then is applied.
await fetch(`${control}/api/clock/advance`, { method: "POST", body: JSON.stringify({ by: "61m" }) });
console.log("clock advanced 61m");

const msg = await ch.get("orders.expired", { noAck: true });
if (!msg) throw new Error("orders.expired is empty");
const [death] = msg.properties.headers["x-death"];
console.log(`dead-lettered: ${msg.content} (x-death: ${death.reason} from ${death.queue})`);
await conn.close();

// The Service Bus example of lapse's README, with the official JS SDK: it
// sends a message to the queue "orders" (declared by
// examples/config/Config.json: a 1-hour TTL, dead-lettered on expiry),
// moves lapse's clock 61 minutes and receives the message from the queue's
// dead-letter queue.
//
//   npm ci --prefix examples/servicebus/js && node examples/servicebus/js/main.js
import { ServiceBusClient } from "@azure/service-bus";

const conn = process.env.SERVICEBUS_CONNECTION_STRING ??
  "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
const control = process.env.LAPSE_CONTROL_URL ?? "http://localhost:8080";

const client = new ServiceBusClient(conn);
const sender = client.createSender("orders");
await sender.sendMessages({ body: "order 1" });
console.log("sent: order 1");

// The control API moves lapse's clock; it answers once every expiry due by
// then is applied.
await fetch(`${control}/api/clock/advance`, { method: "POST", body: JSON.stringify({ by: "61m" }) });
console.log("clock advanced 61m");

const dlq = client.createReceiver("orders", { subQueueType: "deadLetter" });
const [msg] = await dlq.receiveMessages(1, { maxWaitTimeInMs: 10000 });
console.log(`dead-lettered: ${msg.body} (${msg.deadLetterReason})`);
await dlq.completeMessage(msg);
await client.close();

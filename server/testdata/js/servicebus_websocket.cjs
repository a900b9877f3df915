// @azure/service-bus's WebSocket transport (webSocketOptions with the ws
// package) without UseDevelopmentEmulator: the AMQP client opens
// wss://<endpoint>/$servicebus/websocket, the administration client sends
// https:// requests to the same endpoint. Run by websocket_test.go with
// SERVICEBUS_CONNECTION_STRING, SERVICEBUS_QUEUE and NODE_EXTRA_CA_CERTS
// (lapse's certificate); prints one JSON line.
const { ServiceBusClient, ServiceBusAdministrationClient } = require("@azure/service-bus");
const WebSocket = require("ws");

// Dialed notes each WebSocket the SDK opens: its URL and subprotocols.
const dialed = [];
class Dialed extends WebSocket {
  constructor(url, protocols, options) {
    super(url, protocols, options);
    dialed.push({ url: String(url), protocols: [].concat(protocols) });
  }
}

async function main() {
  const conn = process.env.SERVICEBUS_CONNECTION_STRING;
  const queue = process.env.SERVICEBUS_QUEUE;
  const adm = new ServiceBusAdministrationClient(conn);
  await adm.createQueue(queue);
  const client = new ServiceBusClient(conn, {
    webSocketOptions: { webSocket: Dialed },
    retryOptions: { maxRetries: 0, timeoutInMs: 15000 },
  });
  const sender = client.createSender(queue);
  await sender.sendMessages({ body: "over a WebSocket" });
  const receiver = client.createReceiver(queue);
  const msgs = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
  await receiver.completeMessage(msgs[0]);
  const props = await adm.getQueueRuntimeProperties(queue);
  await client.close();
  console.log(JSON.stringify({
    bodies: msgs.map((m) => m.body),
    activeAfterComplete: props.activeMessageCount,
    dialed,
  }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

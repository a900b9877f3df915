// @azure/service-bus without UseDevelopmentEmulator: the AMQP client dials
// the endpoint's host and port over TLS, the administration client builds
// https:// URLs from the same endpoint. Run by amqps_test.go with
// SERVICEBUS_CONNECTION_STRING and NODE_EXTRA_CA_CERTS (lapse's
// certificate); prints one JSON line.
const { ServiceBusClient, ServiceBusAdministrationClient } = require("@azure/service-bus");

async function main() {
  const conn = process.env.SERVICEBUS_CONNECTION_STRING;
  const adm = new ServiceBusAdministrationClient(conn);
  await adm.createQueue("tls");
  const client = new ServiceBusClient(conn);
  const sender = client.createSender("tls");
  await sender.sendMessages({ body: "over TLS" });
  const receiver = client.createReceiver("tls");
  const msgs = await receiver.receiveMessages(1, { maxWaitTimeInMs: 5000 });
  await receiver.completeMessage(msgs[0]);
  const props = await adm.getQueueRuntimeProperties("tls");
  await client.close();
  console.log(JSON.stringify({
    bodies: msgs.map((m) => m.body),
    messageIds: msgs.map((m) => /^[0-9a-f]{32}$/.test(m.messageId)),
    deliveryCounts: msgs.map((m) => m.deliveryCount),
    activeAfterComplete: props.activeMessageCount,
  }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

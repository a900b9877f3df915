// lapse's own program of the sending half of Microsoft's JavaScript
// quickstarts for Service Bus queues and for topics and subscriptions,
// with @azure/service-bus: it sends ten messages without a message-id to
// the queue or topic its argument names, in batches, through
// $SERVICEBUS_CONNECTION_STRING.
//
//   node send.js ENTITY
//
// servicebus/quickstart_test.go runs it; docs/examples.md names the
// quickstarts.
const { ServiceBusClient } = require("@azure/service-bus");

async function main(entity) {
  const client = new ServiceBusClient(process.env.SERVICEBUS_CONNECTION_STRING);
  try {
    const sender = client.createSender(entity);
    const parcels = Array.from({ length: 10 }, (_, i) => ({ body: `parcel ${i + 1}` }));
    let batch = await sender.createMessageBatch();
    for (const parcel of parcels) {
      if (batch.tryAddMessage(parcel)) continue;
      // The batch is full: send it and start the next with this message.
      await sender.sendMessages(batch);
      batch = await sender.createMessageBatch();
      if (!batch.tryAddMessage(parcel)) throw new Error(`${parcel.body} is larger than a batch`);
    }
    await sender.sendMessages(batch);
    console.log(`sent ${parcels.length} messages to ${entity}`);
  } finally {
    await client.close();
  }
}

main(process.argv[2]).catch((err) => {
  console.error(err);
  process.exit(1);
});

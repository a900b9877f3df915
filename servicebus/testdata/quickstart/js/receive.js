// lapse's own program of the receiving half of Microsoft's JavaScript
// quickstarts for Service Bus queues and for topics and subscriptions,
// with @azure/service-bus: it subscribes to the queue, or to the topic's
// subscription, that its arguments name, through
// $SERVICEBUS_CONNECTION_STRING, prints each message and lets the SDK
// complete it once the handler returns. It closes a second after the
// COUNTth message, which leaves the SDK time to complete that one.
//
//   node receive.js COUNT QUEUE
//   node receive.js COUNT TOPIC SUBSCRIPTION
//
// servicebus/quickstart_test.go runs it; docs/examples.md names the
// quickstarts.
const { delay, ServiceBusClient } = require("@azure/service-bus");

async function main(count, entity, subscription) {
  const client = new ServiceBusClient(process.env.SERVICEBUS_CONNECTION_STRING);
  const receiver = subscription ? client.createReceiver(entity, subscription) : client.createReceiver(entity);
  let received = 0;
  let all;
  const done = new Promise((resolve) => { all = resolve; });
  receiver.subscribe({
    async processMessage(msg) {
      console.log(`received: ${msg.body}`);
      if (++received === count) all();
    },
    async processError(args) {
      console.log(`error from ${args.errorSource}: ${args.error}`);
    },
  });
  await done;
  await delay(1000);
  await receiver.close();
  await client.close();
}

main(Number(process.argv[2]), process.argv[3], process.argv[4]).catch((err) => {
  console.error(err);
  process.exit(1);
});

// lapse's own program of the flows of RabbitMQ's tutorials 1 ("Hello
// World!") and 2 ("Work Queues"), with amqplib. It connects to
// $RABBITMQ_URL and does one of:
//
//   send          publish "hello, lapse" to the quorum queue greetings
//   receive       print what arrives on greetings (auto-ack) until SIGINT
//   add WORD...   publish the words, persistent, to the quorum queue jobs
//   work          take jobs one at a time (prefetch 1), acking each, until SIGINT
//
// rabbitmq/tutorials_test.go runs it; docs/examples.md names the tutorials.
const amqp = require("amqplib");

// Both queues are durable quorum queues, as the tutorials declare them.
const queueOptions = { durable: true, arguments: { "x-queue-type": "quorum" } };

async function publish(channel, queue, body, persistent) {
  await channel.assertQueue(queue, queueOptions);
  channel.sendToQueue(queue, Buffer.from(body), { contentType: "text/plain", persistent });
}

async function consume(conn, channel, queue, noAck, handle) {
  await channel.assertQueue(queue, queueOptions);
  await channel.consume(queue, handle, { noAck });
  console.log(`waiting on ${queue}`);
  process.once("SIGINT", () => conn.close().finally(() => process.exit(0)));
}

async function run(command, args) {
  const conn = await amqp.connect(process.env.RABBITMQ_URL);
  // A confirm channel lets a sender wait until the broker has its message.
  const channel = await conn.createConfirmChannel();
  switch (command) {
    case "send":
      await publish(channel, "greetings", "hello, lapse", false);
      await channel.waitForConfirms();
      console.log("sent: hello, lapse");
      return conn.close();
    case "receive":
      return consume(conn, channel, "greetings", true, (msg) => console.log(`got: ${msg.content}`));
    case "add": {
      const job = args.join(" ");
      await publish(channel, "jobs", job, true);
      await channel.waitForConfirms();
      console.log(`added: ${job}`);
      return conn.close();
    }
    case "work":
      await channel.prefetch(1);
      return consume(conn, channel, "jobs", false, (msg) => {
        console.log(`took: ${msg.content}`);
        channel.ack(msg);
        console.log(`acked: ${msg.content}`);
      });
    default:
      throw new Error(`unknown command ${command}: want send, receive, add WORD... or work`);
  }
}

run(process.argv[2], process.argv.slice(3)).catch((err) => {
  console.error(err);
  process.exit(1);
});

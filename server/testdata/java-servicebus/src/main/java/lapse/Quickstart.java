package lapse;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusMessageBatch;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * lapse's own program of the flow of Microsoft's Java Service Bus
 * quickstarts ("Send messages to and receive messages from Azure Service
 * Bus queues", and its topics-and-subscriptions twin): send one message,
 * then a batch of three, then receive them with a processor client that
 * completes each, and stop once all four are completed. It connects with
 * $SERVICEBUS_CONNECTION_STRING and does one of:
 *
 * <pre>
 *   queue QUEUE              send to the queue and receive from it
 *   topic TOPIC SUBSCRIPTION send to the topic and receive from the subscription
 * </pre>
 *
 * server/servicebus_java_test.go runs it; docs/examples.md names the quickstarts.
 */
public final class Quickstart {
    private Quickstart() {}

    public static void main(String[] args) throws InterruptedException {
        boolean topic = args.length == 3 && args[0].equals("topic");
        if (!topic && !(args.length == 2 && args[0].equals("queue"))) {
            System.err.println("usage: Quickstart queue QUEUE | topic TOPIC SUBSCRIPTION");
            System.exit(2);
        }
        String cs = System.getenv("SERVICEBUS_CONNECTION_STRING");
        ServiceBusClientBuilder.ServiceBusSenderClientBuilder sb = new ServiceBusClientBuilder().connectionString(cs).sender();
        try (ServiceBusSenderClient sender = topic ? sb.topicName(args[1]).buildClient() : sb.queueName(args[1]).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("Hello, lapse"));
            System.out.println("sent: Hello, lapse");
            ServiceBusMessageBatch batch = sender.createMessageBatch();
            for (String body : List.of("first", "second", "third")) {
                if (!batch.tryAddMessage(new ServiceBusMessage(body))) {
                    throw new IllegalStateException("the batch is full at " + body);
                }
            }
            sender.sendMessages(batch);
            System.out.println("sent a batch of " + batch.getCount());
        }

        CountDownLatch all = new CountDownLatch(4);
        ServiceBusClientBuilder.ServiceBusProcessorClientBuilder pb = new ServiceBusClientBuilder().connectionString(cs).processor();
        pb = topic ? pb.topicName(args[1]).subscriptionName(args[2]) : pb.queueName(args[1]);
        // The handler completes each message itself before it counts it, so
        // that closing the processor once all came loses no completion.
        ServiceBusProcessorClient processor = pb
            .disableAutoComplete()
            .processMessage(ctx -> {
                System.out.println("received #" + ctx.getMessage().getSequenceNumber() + ": " + ctx.getMessage().getBody());
                ctx.complete();
                all.countDown();
            })
            .processError(ctx -> System.out.println("error from " + ctx.getErrorSource() + ": " + ctx.getException()))
            .buildProcessorClient();
        processor.start();
        boolean done = all.await(30, TimeUnit.SECONDS);
        processor.close();
        if (!done) {
            System.err.println("quickstart: " + all.getCount() + " messages did not come");
            System.exit(1);
        }
        System.out.println("done");
    }
}

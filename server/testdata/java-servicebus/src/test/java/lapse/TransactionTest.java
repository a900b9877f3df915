package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusTransactionContext;
import com.azure.messaging.servicebus.models.CompleteOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Service Bus transactions through ServiceBusTransactionContext: a send and
 * a complete committed together or rolled back together, and the
 * one-entity rule, with and without cross-entity transactions (the
 * builder's enableCrossEntityTransactions).
 */
class TransactionTest {
    private static String queue() {
        String q = Lapse.name("tx");
        Lapse.admin().createQueue(q);
        return q;
    }

    private static ServiceBusReceiverClient receiver(ServiceBusClientBuilder b, String q) {
        return b.receiver().queueName(q).disableAutoComplete().maxAutoLockRenewDuration(Duration.ZERO).buildClient();
    }

    private static List<String> peek(String q) {
        List<String> out = new ArrayList<>();
        try (ServiceBusReceiverClient r = Lapse.client().receiver().queueName(q).buildClient()) {
            r.peekMessages(10).forEach(m -> out.add(m.getBody().toString()));
        }
        return out;
    }

    private static ServiceBusReceivedMessage one(ServiceBusReceiverClient r) {
        for (int i = 0; i < 5; i++) {
            for (ServiceBusReceivedMessage m : r.receiveMessages(1, Duration.ofSeconds(2))) {
                return m;
            }
        }
        throw new AssertionError("no message came");
    }

    @Test
    void aSendAndACompleteCommitTogether() {
        String q = queue();
        ServiceBusClientBuilder b = Lapse.client();
        try (ServiceBusSenderClient s = b.sender().queueName(q).buildClient(); ServiceBusReceiverClient r = receiver(b, q)) {
            s.sendMessage(new ServiceBusMessage("order"));
            ServiceBusReceivedMessage order = one(r);
            ServiceBusTransactionContext tx = s.createTransaction();
            s.sendMessage(new ServiceBusMessage("shipped"), tx);
            r.complete(order, new CompleteOptions().setTransactionContext(tx));
            assertEquals(List.of("order"), peek(q), "before the commit");
            s.commitTransaction(tx);
            assertEquals(List.of("shipped"), peek(q), "after the commit");
        }
    }

    @Test
    void aRollbackSendsNothingAndLeavesTheMessageLocked() {
        String q = queue();
        ServiceBusClientBuilder b = Lapse.client();
        try (ServiceBusSenderClient s = b.sender().queueName(q).buildClient(); ServiceBusReceiverClient r = receiver(b, q)) {
            s.sendMessage(new ServiceBusMessage("order"));
            ServiceBusReceivedMessage order = one(r);
            ServiceBusTransactionContext tx = s.createTransaction();
            s.sendMessage(new ServiceBusMessage("shipped"), tx);
            r.complete(order, new CompleteOptions().setTransactionContext(tx));
            s.rollbackTransaction(tx);
            assertEquals(List.of("order"), peek(q), "after the rollback");
            // Still locked by the receiver (the SDK will not settle the same
            // message twice): no one else gets it until the lock runs out.
            assertEquals(0, r.receiveMessages(1, Duration.ofSeconds(1)).stream().count(), "the rolled-back complete unlocked it");
            Lapse.advance(Duration.ofMinutes(2));
            ServiceBusReceivedMessage again = one(r);
            assertEquals("order", again.getBody().toString());
            r.complete(again);
            assertEquals(List.of(), peek(q));
        }
    }

    @Test
    void sendViaTheFirstEntityCommitsAcrossTwo() {
        String in = queue();
        String out = queue();
        try (ServiceBusSenderClient s = Lapse.client().sender().queueName(in).buildClient()) {
            s.sendMessage(new ServiceBusMessage("order"));
        }
        ServiceBusClientBuilder b = Lapse.client().enableCrossEntityTransactions();
        try (ServiceBusReceiverClient r = receiver(b, in); ServiceBusSenderClient s = b.sender().queueName(out).buildClient()) {
            ServiceBusReceivedMessage order = one(r);
            ServiceBusTransactionContext tx = r.createTransaction();
            r.complete(order, new CompleteOptions().setTransactionContext(tx));
            s.sendMessage(new ServiceBusMessage("invoice"), tx);
            r.commitTransaction(tx);
        }
        assertEquals(List.of(), peek(in));
        assertEquals(List.of("invoice"), peek(out));
    }

    @Test
    void aSecondEntityWithoutSendViaIsRefused() {
        String first = queue();
        String second = queue();
        ServiceBusClientBuilder b = Lapse.client();
        try (ServiceBusSenderClient s1 = b.sender().queueName(first).buildClient();
             ServiceBusSenderClient s2 = b.sender().queueName(second).buildClient()) {
            ServiceBusTransactionContext tx = s1.createTransaction();
            s1.sendMessage(new ServiceBusMessage("one"), tx);
            // The service refuses the send (its transactional-state says
            // rejected), which this SDK does not report: the commit fails.
            s2.sendMessage(new ServiceBusMessage("two"), tx);
            assertThrows(RuntimeException.class, () -> s1.commitTransaction(tx));
        }
        assertEquals(List.of(), peek(first));
        assertEquals(List.of(), peek(second));
    }
}

package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import com.azure.messaging.servicebus.models.SubQueue;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A queue through the sender, receiver and processor clients. */
class QueueTest {
    private static final Duration WAIT = Duration.ofSeconds(2);

    private static String queue(CreateQueueOptions options) {
        String q = Lapse.name("q");
        Lapse.admin().createQueue(q, options == null ? new CreateQueueOptions() : options);
        return q;
    }

    private static ServiceBusSenderClient sender(String q) {
        return Lapse.client().sender().queueName(q).buildClient();
    }

    /** A peek-lock receiver that neither completes nor renews on its own. */
    private static ServiceBusReceiverClient receiver(String q) {
        return Lapse.client().receiver().queueName(q).disableAutoComplete()
            .maxAutoLockRenewDuration(Duration.ZERO).buildClient();
    }

    private static List<ServiceBusReceivedMessage> receive(ServiceBusReceiverClient r, int n) {
        List<ServiceBusReceivedMessage> out = new ArrayList<>();
        for (int i = 0; i < 5 && out.size() < n; i++) {
            r.receiveMessages(n - out.size(), WAIT).forEach(out::add);
        }
        return out;
    }

    /** What one receive of a second gets: for a test that expects nothing. */
    private static List<ServiceBusReceivedMessage> receiveNone(ServiceBusReceiverClient r) {
        List<ServiceBusReceivedMessage> out = new ArrayList<>();
        r.receiveMessages(1, Duration.ofSeconds(1)).forEach(out::add);
        return out;
    }

    private static Map<String, ServiceBusReceivedMessage> byBody(List<ServiceBusReceivedMessage> ms) {
        Map<String, ServiceBusReceivedMessage> out = new HashMap<>();
        ms.forEach(m -> out.put(m.getBody().toString(), m));
        return out;
    }

    /**
     * Issue 31.2, as lapse's Go, JavaScript and Python tests of it: the queue's default TTL
     * shows on receive, not on peek, and adds no creation-time or absolute-expiry-time; one
     * beyond 32 bits of milliseconds comes as the largest; a defer counts the delivery and
     * the one that reaches MaxDeliveryCount dead-letters the message.
     */
    @Test
    void theMessagePropertiesOfExpiry_SB9_SB11() {
        Map<String, Duration> ttls = Map.of("day", Duration.ofDays(1), "long", Duration.ofMillis(4294967295L));
        for (String which : List.of("day", "long")) {
            String q = queue(new CreateQueueOptions().setDefaultMessageTimeToLive(
                which.equals("day") ? Duration.ofDays(1) : Duration.ofDays(60)));
            try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
                s.sendMessage(new ServiceBusMessage(which));
                ServiceBusReceivedMessage peeked = r.peekMessage(1L);
                assertNotNull(peeked, which + ": peek");
                ServiceBusReceivedMessage m = receive(r, 1).get(0);
                assertEquals(Duration.ZERO, peeked.getTimeToLive(), which + ": the TTL on peek (none sent: Java shows zero)");
                assertEquals(ttls.get(which), m.getTimeToLive(), which + ": the TTL on receive");
                assertEquals(m.getEnqueuedTime().plus(ttls.get(which)), m.getExpiresAt(), which + ": ExpiresAt");
                assertEquals(null, m.getRawAmqpMessage().getProperties().getCreationTime(), which + ": creation-time");
                assertEquals(null, m.getRawAmqpMessage().getProperties().getAbsoluteExpiryTime(), which + ": absolute-expiry-time");
            }
        }
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
            s.sendMessage(new ServiceBusMessage("d"));
            ServiceBusReceivedMessage m = receive(r, 1).get(0);
            r.defer(m);
            assertEquals(List.of(0L, 1L, 1L), List.of(m.getDeliveryCount(), // the header's count, as JS and Python show it
                r.peekMessage(m.getSequenceNumber()).getDeliveryCount(),
                r.receiveDeferredMessage(m.getSequenceNumber()).getDeliveryCount()));
        }
        String once = queue(new CreateQueueOptions().setMaxDeliveryCount(1));
        try (ServiceBusSenderClient s = sender(once); ServiceBusReceiverClient r = receiver(once);
             ServiceBusReceiverClient dlq = Lapse.client().receiver().queueName(once).subQueue(SubQueue.DEAD_LETTER_QUEUE)
                 .disableAutoComplete().buildClient()) {
            s.sendMessage(new ServiceBusMessage("x"));
            r.defer(receive(r, 1).get(0));
            List<ServiceBusReceivedMessage> dead = receive(dlq, 1);
            assertEquals(1, dead.size(), "dead letters");
            assertEquals("MaxDeliveryCountExceeded", dead.get(0).getDeadLetterReason());
        }
    }

    @Test
    void settlesInAllFourWays() {
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
            for (String b : List.of("complete", "abandon", "dead-letter", "defer")) {
                s.sendMessage(new ServiceBusMessage(b).setMessageId("id-" + b));
            }
            Map<String, ServiceBusReceivedMessage> got = byBody(receive(r, 4));
            assertEquals(4, got.size(), "received " + got.keySet());
            r.complete(got.get("complete"));
            r.abandon(got.get("abandon"));
            r.deadLetter(got.get("dead-letter"), new DeadLetterOptions().setDeadLetterReason("bad").setDeadLetterErrorDescription("why"));
            r.defer(got.get("defer"));
            long deferredSeq = got.get("defer").getSequenceNumber();

            List<ServiceBusReceivedMessage> again = receive(r, 1);
            assertEquals(1, again.size());
            assertEquals("abandon", again.get(0).getBody().toString());
            // The Java SDK gives the AMQP header's delivery-count as it is: the
            // deliveries before this one (the Go and .NET SDKs add one).
            assertEquals(1, again.get(0).getDeliveryCount());
            r.complete(again.get(0));

            ServiceBusReceivedMessage deferred = r.receiveDeferredMessage(deferredSeq);
            assertEquals("defer", deferred.getBody().toString());
            assertEquals(ServiceBusMessageState.DEFERRED, deferred.getState());
            r.complete(deferred);

            try (ServiceBusReceiverClient dlq = Lapse.client().receiver().queueName(q).subQueue(SubQueue.DEAD_LETTER_QUEUE)
                    .disableAutoComplete().buildClient()) {
                List<ServiceBusReceivedMessage> dead = receive(dlq, 1);
                assertEquals(1, dead.size());
                assertEquals("dead-letter", dead.get(0).getBody().toString());
                assertEquals("bad", dead.get(0).getDeadLetterReason());
                assertEquals("why", dead.get(0).getDeadLetterErrorDescription());
                dlq.complete(dead.get(0));
            }
            assertEquals(0, r.peekMessages(10).stream().count());
        }
    }

    @Test
    void peekShowsWithoutLocking() {
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
            s.sendMessages(List.of(new ServiceBusMessage("a"), new ServiceBusMessage("b")));
            List<String> peeked = r.peekMessages(10).stream().map(m -> m.getBody().toString()).collect(Collectors.toList());
            assertEquals(List.of("a", "b"), peeked);
            assertEquals(2, receive(r, 2).size(), "peek must not lock");
        }
    }

    @Test
    void anAbandonedDeferredMessageStaysDeferred_SB9() {
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
            s.sendMessage(new ServiceBusMessage("d"));
            ServiceBusReceivedMessage m = receive(r, 1).get(0);
            r.defer(m);
            ServiceBusReceivedMessage taken = r.receiveDeferredMessage(m.getSequenceNumber());
            r.abandon(taken);
            assertEquals(0, receiveNone(r).size(), "a plain receive got the abandoned deferred message");
            ServiceBusReceivedMessage again = r.receiveDeferredMessage(m.getSequenceNumber());
            assertNotNull(again, "the deferred message was not deferred after abandon");
            r.complete(again);
        }
    }

    @Test
    void schedulesAndCancels_SB4() {
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
            OffsetDateTime at = Lapse.now().plusMinutes(10);
            long keep = s.scheduleMessage(new ServiceBusMessage("kept"), at);
            long cancel = s.scheduleMessage(new ServiceBusMessage("cancelled"), at);
            s.cancelScheduledMessage(cancel);
            ServiceBusReceivedMessage peeked = r.peekMessage(keep);
            assertEquals(ServiceBusMessageState.SCHEDULED, peeked.getState());
            assertEquals(0, receiveNone(r).size(), "a scheduled message was received before its time");
            Lapse.advance(Duration.ofMinutes(11));
            List<ServiceBusReceivedMessage> got = receive(r, 1);
            got.addAll(receiveNone(r));
            assertEquals(List.of("kept"), got.stream().map(m -> m.getBody().toString()).collect(Collectors.toList()));
            assertEquals(ServiceBusMessageState.SCHEDULED, got.get(0).getState());
            r.complete(got.get(0));
        }
    }

    @Test
    void renewsALock() {
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q); ServiceBusReceiverClient r = receiver(q)) {
            s.sendMessage(new ServiceBusMessage("r"));
            ServiceBusReceivedMessage m = receive(r, 1).get(0);
            OffsetDateTime before = m.getLockedUntil();
            Lapse.advance(Duration.ofSeconds(30));
            OffsetDateTime after = r.renewMessageLock(m);
            assertTrue(after.isAfter(before), "renewed lock ends " + after + ", before " + before);
            Lapse.advance(Duration.ofSeconds(45)); // past the first lock, within the renewed one
            r.complete(m);
        }
    }

    @Test
    void expiresIntoTheDeadLetterQueue_SB8() {
        String q = queue(new CreateQueueOptions().setDeadLetteringOnMessageExpiration(true));
        try (ServiceBusSenderClient s = sender(q)) {
            s.sendMessage(new ServiceBusMessage("short").setTimeToLive(Duration.ofMinutes(1)));
            s.sendMessage(new ServiceBusMessage("long").setTimeToLive(Duration.ofHours(1)));
        }
        Lapse.advance(Duration.ofMinutes(2));
        try (ServiceBusReceiverClient r = receiver(q);
             ServiceBusReceiverClient dlq = Lapse.client().receiver().queueName(q).subQueue(SubQueue.DEAD_LETTER_QUEUE)
                 .disableAutoComplete().buildClient()) {
            List<ServiceBusReceivedMessage> live = receive(r, 1);
            live.addAll(receiveNone(r));
            assertEquals(List.of("long"), live.stream().map(m -> m.getBody().toString()).collect(Collectors.toList()));
            List<ServiceBusReceivedMessage> dead = receive(dlq, 1);
            assertEquals(1, dead.size());
            assertEquals("short", dead.get(0).getBody().toString());
            assertEquals("TTLExpiredException", dead.get(0).getDeadLetterReason());
        }
    }

    @Test
    void aProcessorHandlesEachMessageOnce() throws InterruptedException {
        String q = queue(null);
        try (ServiceBusSenderClient s = sender(q)) {
            s.sendMessages(List.of(new ServiceBusMessage("p1"), new ServiceBusMessage("p2"), new ServiceBusMessage("p3")));
        }
        Map<String, Integer> seen = new ConcurrentHashMap<>();
        CountDownLatch done = new CountDownLatch(3);
        ServiceBusProcessorClient p = Lapse.client().processor().queueName(q)
            .processMessage(ctx -> {
                seen.merge(ctx.getMessage().getBody().toString(), 1, Integer::sum);
                done.countDown();
            })
            .processError(ctx -> { })
            .buildProcessorClient();
        p.start();
        try {
            assertTrue(done.await(30, TimeUnit.SECONDS), "handled " + seen);
        } finally {
            p.close();
        }
        assertEquals(Map.of("p1", 1, "p2", 1, "p3", 1), seen);
        // The processor completes a message after its handler returns, on
        // its own threads: wait for the queue to empty (no expiry involved).
        long left = -1;
        try (ServiceBusReceiverClient r = receiver(q)) {
            for (int i = 0; i < 50 && left != 0; i++) {
                left = r.peekMessages(10).stream().count();
                if (left != 0) {
                    Thread.sleep(100);
                }
            }
        }
        assertEquals(0, left, "the processor completes what it handled");
    }
}

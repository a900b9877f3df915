package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.util.BinaryData;
import com.azure.messaging.servicebus.ServiceBusErrorSource;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A queue that requires sessions. */
class SessionTest {
    private static String sessionQueue() {
        String q = Lapse.name("sq");
        Lapse.admin().createQueue(q, new CreateQueueOptions().setSessionRequired(true));
        try (ServiceBusSenderClient s = Lapse.client().sender().queueName(q).buildClient()) {
            s.sendMessages(List.of(
                new ServiceBusMessage("a1").setSessionId("a"),
                new ServiceBusMessage("b1").setSessionId("b"),
                new ServiceBusMessage("a2").setSessionId("a")));
        }
        return q;
    }

    private static ServiceBusSessionReceiverClient sessions(String q) {
        return Lapse.client().sessionReceiver().queueName(q).disableAutoComplete()
            .maxAutoLockRenewDuration(Duration.ZERO).buildClient();
    }

    private static List<String> bodies(ServiceBusReceiverClient r, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 5 && out.size() < n; i++) {
            for (ServiceBusReceivedMessage m : r.receiveMessages(n - out.size(), Duration.ofSeconds(2))) {
                out.add(m.getBody().toString());
                r.complete(m);
            }
        }
        return out;
    }

    @Test
    void acceptsANamedSessionWithItsState() {
        String q = sessionQueue();
        try (ServiceBusSessionReceiverClient sessions = sessions(q);
             ServiceBusReceiverClient a = sessions.acceptSession("a")) {
            assertEquals("a", a.getSessionId());
            assertEquals(List.of("a1", "a2"), bodies(a, 2));
            a.setSessionState("step 2".getBytes());
            assertEquals("step 2", new String(a.getSessionState()));
            OffsetDateTime until = a.renewSessionLock();
            assertTrue(until.isAfter(Lapse.now()), "session lock renewed until " + until);
        }
    }

    @Test
    void acceptsTheNextSession() {
        String q = sessionQueue();
        List<String> got = new ArrayList<>();
        try (ServiceBusSessionReceiverClient sessions = sessions(q)) {
            for (int i = 0; i < 2; i++) {
                try (ServiceBusReceiverClient next = sessions.acceptNextSession()) {
                    List<String> b = bodies(next, next.getSessionId().equals("a") ? 2 : 1);
                    got.add(next.getSessionId() + "=" + String.join(",", b));
                }
            }
        }
        got.sort(null);
        assertEquals(List.of("a=a1,a2", "b=b1"), got);
    }

    @Test
    void aSessionLockRunsOutOnTheMovedClock() {
        String q = sessionQueue();
        try (ServiceBusSessionReceiverClient sessions = sessions(q);
             ServiceBusReceiverClient b = sessions.acceptSession("b")) {
            ServiceBusReceivedMessage m = b.receiveMessages(1, Duration.ofSeconds(2)).stream().findFirst().orElseThrow();
            Lapse.advance(Duration.ofMinutes(2));
            ServiceBusException e = assertThrows(ServiceBusException.class, () -> b.complete(m));
            assertEquals(ServiceBusFailureReason.SESSION_LOCK_LOST, e.getReason(), e.toString());
        }
        try (ServiceBusSessionReceiverClient sessions = sessions(q);
             ServiceBusReceiverClient again = sessions.acceptSession("b")) {
            ServiceBusReceivedMessage m = again.receiveMessages(1, Duration.ofSeconds(2)).stream().findFirst().orElseThrow();
            assertEquals("b1", m.getBody().toString());
            assertEquals(1, m.getDeliveryCount()); // one delivery before (QueueTest says why not 2)
            again.complete(m);
        }
    }
}

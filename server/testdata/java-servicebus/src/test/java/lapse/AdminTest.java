package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.exception.ResourceExistsException;
import com.azure.core.exception.ResourceNotFoundException;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.QueueRuntimeProperties;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** ServiceBusAdministrationClient against lapse's administration API. */
class AdminTest {
    @Test
    void createsUpdatesListsAndDeletesAQueue() {
        ServiceBusAdministrationClient admin = Lapse.admin();
        String q = Lapse.name("admin");
        QueueProperties created = admin.createQueue(q, new CreateQueueOptions()
            .setLockDuration(Duration.ofSeconds(45)).setMaxDeliveryCount(3)
            .setDefaultMessageTimeToLive(Duration.ofHours(2)).setDeadLetteringOnMessageExpiration(true));
        assertEquals(Duration.ofSeconds(45), created.getLockDuration());
        assertEquals(3, created.getMaxDeliveryCount());
        assertEquals(Duration.ofHours(2), created.getDefaultMessageTimeToLive());
        assertTrue(created.isDeadLetteringOnMessageExpiration());
        assertThrows(ResourceExistsException.class, () -> admin.createQueue(q));

        QueueProperties p = admin.getQueue(q);
        p.setMaxDeliveryCount(7).setDefaultMessageTimeToLive(Duration.ofMinutes(30));
        QueueProperties updated = admin.updateQueue(p);
        assertEquals(7, updated.getMaxDeliveryCount());
        assertEquals(Duration.ofMinutes(30), admin.getQueue(q).getDefaultMessageTimeToLive());

        assertTrue(admin.listQueues().stream().anyMatch(x -> x.getName().equals(q)), "listQueues lacks " + q);
        assertTrue(admin.getQueueExists(q));

        try (ServiceBusSenderClient s = Lapse.client().sender().queueName(q).buildClient()) {
            s.sendMessages(List.of(new ServiceBusMessage("1"), new ServiceBusMessage("2")));
        }
        QueueRuntimeProperties rt = admin.getQueueRuntimeProperties(q);
        assertEquals(2, rt.getActiveMessageCount());
        assertEquals(2, rt.getTotalMessageCount());

        admin.deleteQueue(q);
        assertFalse(admin.getQueueExists(q));
        assertThrows(ResourceNotFoundException.class, () -> admin.getQueue(q));
    }

    @Test
    void topicsSubscriptionsAndRules() {
        ServiceBusAdministrationClient admin = Lapse.admin();
        String t = Lapse.name("topic");
        admin.createTopic(t);
        admin.createSubscription(t, "s1");
        admin.createSubscription(t, "s2");
        assertEquals(2, admin.listSubscriptions(t).stream().count());
        assertEquals(2, admin.getTopicRuntimeProperties(t).getSubscriptionCount());
        admin.createRule(t, "big", "s1", new com.azure.messaging.servicebus.administration.models.CreateRuleOptions(
            new com.azure.messaging.servicebus.administration.models.SqlRuleFilter("size > 10")));
        assertEquals(2, admin.listRules(t, "s1").stream().count());
        admin.deleteRule(t, "s1", "big");
        assertEquals(1, admin.listRules(t, "s1").stream().count());
        admin.deleteTopic(t);
        assertFalse(admin.getTopicExists(t));
    }
}

package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusRuleManagerClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A topic, its subscriptions and their rules. */
class TopicTest {
    private static List<String> drain(String topic, String sub) {
        List<String> out = new ArrayList<>();
        try (ServiceBusReceiverClient r = Lapse.client().receiver().topicName(topic).subscriptionName(sub).buildClient()) {
            for (int i = 0; i < 2; i++) {
                for (ServiceBusReceivedMessage m : r.receiveMessages(10, Duration.ofMillis(700))) {
                    out.add(m.getBody().toString());
                }
            }
        }
        out.sort(null);
        return out;
    }

    @Test
    void sqlFiltersNamePropertiesWithoutRegardToCase() {
        ServiceBusAdministrationClient admin = Lapse.admin();
        String t = Lapse.name("t");
        admin.createTopic(t);
        admin.createSubscription(t, "all");
        admin.createSubscription(t, "yellow");
        admin.deleteRule(t, "yellow", "$Default");
        admin.createRule(t, "yellow-only", "yellow", new CreateRuleOptions(new SqlRuleFilter("Color = 'yellow'")));
        try (ServiceBusSenderClient s = Lapse.client().sender().topicName(t).buildClient()) {
            ServiceBusMessage y = new ServiceBusMessage("y");
            y.getApplicationProperties().put("color", "yellow");
            ServiceBusMessage b = new ServiceBusMessage("b");
            b.getApplicationProperties().put("color", "blue");
            s.sendMessages(List.of(y, b));
        }
        assertEquals(List.of("b", "y"), drain(t, "all"));
        assertEquals(List.of("y"), drain(t, "yellow"));
    }

    @Test
    void aRuleManagerListsTheRulesOfTheSubscriptionAsItIsNow() {
        ServiceBusAdministrationClient admin = Lapse.admin();
        String t = Lapse.name("t");
        admin.createTopic(t);
        admin.createSubscription(t, "s");
        try (ServiceBusRuleManagerClient rules = Lapse.client().ruleManager().topicName(t).subscriptionName("s").buildClient()) {
            rules.createRule("red", new CreateRuleOptions(new SqlRuleFilter("color = 'red'")));
            assertEquals(List.of("$Default", "red"), names(rules.listRules()));
        }
        admin.deleteSubscription(t, "s");
        admin.createSubscription(t, "s");
        try (ServiceBusRuleManagerClient rules = Lapse.client().ruleManager().topicName(t).subscriptionName("s").buildClient()) {
            assertEquals(List.of("$Default"), names(rules.listRules()));
        }
        assertEquals(List.of("$Default"), names(admin.listRules(t, "s")));
    }

    private static List<String> names(Iterable<RuleProperties> rules) {
        List<String> out = new ArrayList<>();
        rules.forEach(r -> out.add(r.getName()));
        out.sort(null);
        return out;
    }
}

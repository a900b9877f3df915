package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.RecoveryListener;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.NetworkConnection;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** RabbitMQ's Java client (amqp-client 5.x) against the broker (issue 27). */
class AmqpClientTest {
    private static ConnectionFactory factory() throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(Broker.AMQP_URL);
        return f;
    }

    private static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** Publish with confirms, then consume with manual acks: every message once, in order, and the queue ends empty. */
    @Test
    void publishWithConfirmsConsumeWithManualAck() throws Exception {
        try (Connection conn = factory().newConnection("java-confirms")) {
            Channel ch = conn.createChannel();
            ch.queueDeclare("java.tasks", true, false, false, null);
            ch.confirmSelect();
            for (int i = 1; i <= 3; i++) {
                ch.basicPublish("", "java.tasks", MessageProperties.PERSISTENT_TEXT_PLAIN, ("t" + i).getBytes(StandardCharsets.UTF_8));
            }
            ch.waitForConfirmsOrDie(5000);
            assertEquals(3, ch.queueDeclarePassive("java.tasks").getMessageCount());

            BlockingQueue<String> got = new LinkedBlockingQueue<>();
            ch.basicQos(1);
            ch.basicConsume("java.tasks", false, new DefaultConsumer(ch) {
                @Override
                public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties props, byte[] body) throws java.io.IOException {
                    got.add(text(body) + (env.isRedeliver() ? " again" : ""));
                    getChannel().basicAck(env.getDeliveryTag(), false);
                }
            });
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                seen.add(got.poll(10, TimeUnit.SECONDS));
            }
            assertEquals(List.of("t1", "t2", "t3"), seen);
            assertEquals(0, ch.queueDeclarePassive("java.tasks").getMessageCount());
        }
    }

    /**
     * A queue with x-message-ttl and a dead-letter exchange: a confirmed
     * persistent message stays for 59 s of lapse's clock and expires at
     * 60 s into the exchange's queue, with x-death as the client decodes it.
     */
    @Test
    @SuppressWarnings("unchecked")
    void ttlIntoDeadLetterExchange() throws Exception {
        try (Connection conn = factory().newConnection("java-ttl")) {
            Channel ch = conn.createChannel();
            ch.exchangeDeclare("java.dlx", "fanout", true);
            ch.queueDeclare("java.dead", true, false, false, null);
            ch.queueBind("java.dead", "java.dlx", "");
            ch.exchangeDeclare("java.jobs", "direct", true);
            ch.queueDeclare("java.work", true, false, false, Map.of("x-message-ttl", 60000, "x-dead-letter-exchange", "java.dlx"));
            ch.queueBind("java.work", "java.jobs", "job");
            ch.confirmSelect();
            AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).headers(Map.of("app", "amqp-client")).build();
            ch.basicPublish("java.jobs", "job", true, props, "m1".getBytes(StandardCharsets.UTF_8));
            ch.waitForConfirmsOrDie(5000);

            assertEquals(1, ch.queueDeclarePassive("java.work").getMessageCount());
            Broker.advance("59s");
            assertEquals(1, ch.queueDeclarePassive("java.work").getMessageCount());
            Broker.advance("1s");
            assertEquals(0, ch.queueDeclarePassive("java.work").getMessageCount());

            GetResponse r = ch.basicGet("java.dead", false);
            assertNotNull(r, "nothing in the dead-letter queue");
            assertEquals("m1", text(r.getBody()));
            assertEquals("job", r.getEnvelope().getRoutingKey());
            assertEquals(2, r.getProps().getDeliveryMode());
            Map<String, Object> h = r.getProps().getHeaders();
            assertEquals("amqp-client", h.get("app").toString());
            List<Map<String, Object>> deaths = (List<Map<String, Object>>) h.get("x-death");
            assertEquals(1, deaths.size());
            Map<String, Object> d = deaths.get(0);
            assertEquals("expired", d.get("reason").toString());
            assertEquals("java.work", d.get("queue").toString());
            assertEquals("java.jobs", d.get("exchange").toString());
            assertEquals(1L, d.get("count"));
            assertEquals(List.of("job"), ((List<Object>) d.get("routing-keys")).stream().map(Object::toString).toList());
            assertTrue(d.get("time") instanceof java.util.Date, "x-death time is a timestamp");
            assertEquals("expired", h.get("x-first-death-reason").toString());
            ch.basicAck(r.getEnvelope().getDeliveryTag(), false);
        }
    }

    /**
     * Automatic connection and topology recovery: the test closes the
     * connection through the management API (320 CONNECTION_FORCED with
     * the X-Reason text); the client connects again, declares its exchange,
     * its exclusive queue and its binding again, restarts its consumer, and
     * the consumer gets what the recovered channel publishes.
     */
    @Test
    void recoversAfterManagementClose() throws Exception {
        ConnectionFactory f = factory();
        f.setAutomaticRecoveryEnabled(true);
        f.setTopologyRecoveryEnabled(true);
        f.setNetworkRecoveryInterval(200);
        try (Connection conn = f.newConnection("java-recovery")) {
            CompletableFuture<ShutdownSignalException> closed = new CompletableFuture<>();
            conn.addShutdownListener(closed::complete);
            CountDownLatch recovered = new CountDownLatch(1);
            ((Recoverable) conn).addRecoveryListener(new RecoveryListener() {
                @Override
                public void handleRecovery(Recoverable r) {
                    recovered.countDown();
                }

                @Override
                public void handleRecoveryStarted(Recoverable r) {}
            });
            Channel ch = conn.createChannel();
            ch.exchangeDeclare("java.recovery", "direct", false, true, null);
            String q = ch.queueDeclare("", false, true, true, null).getQueue();
            ch.queueBind(q, "java.recovery", "r");
            BlockingQueue<String> got = new LinkedBlockingQueue<>();
            ch.basicConsume(q, false, new DefaultConsumer(ch) {
                @Override
                public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties props, byte[] body) throws java.io.IOException {
                    got.add(text(body));
                    getChannel().basicAck(env.getDeliveryTag(), false);
                }
            });
            ch.basicPublish("java.recovery", "r", null, "m1".getBytes(StandardCharsets.UTF_8));
            assertEquals("m1", got.poll(10, TimeUnit.SECONDS));

            int oldPort = ((NetworkConnection) conn).getLocalPort();
            String old = Broker.connectionOnPort(oldPort);
            assertNotNull(old, "the connection is not listed");
            assertEquals(204, Broker.closeConnection(old, "java recovery test"));

            ShutdownSignalException cause = closed.get(10, TimeUnit.SECONDS);
            assertTrue(cause.isHardError() && !cause.isInitiatedByApplication());
            AMQP.Connection.Close close = (AMQP.Connection.Close) cause.getReason();
            assertEquals(320, close.getReplyCode());
            assertEquals("CONNECTION_FORCED - java recovery test", close.getReplyText());
            assertTrue(recovered.await(20, TimeUnit.SECONDS), "the connection did not recover");

            assertNotEquals(oldPort, ((NetworkConnection) conn).getLocalPort());
            assertNotNull(Broker.connectionOnPort(((NetworkConnection) conn).getLocalPort()), "the new connection is not listed");
            ch.basicPublish("java.recovery", "r", null, "m2".getBytes(StandardCharsets.UTF_8));
            assertEquals("m2", got.poll(10, TimeUnit.SECONDS));
        }
    }
}

package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/** Spring AMQP (spring-rabbit) against the broker (issue 27). */
class SpringRabbitTest {
    private CachingConnectionFactory cf;
    private RabbitAdmin admin;
    private RabbitTemplate template;

    @BeforeEach
    void connect() {
        cf = new CachingConnectionFactory(URI.create(Broker.AMQP_URL));
        cf.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
        admin = new RabbitAdmin(cf);
        template = new RabbitTemplate(cf);
    }

    @AfterEach
    void close() {
        cf.destroy();
    }

    /** RabbitAdmin declares exchanges, queues (with arguments) and bindings; the broker reports them back. */
    @Test
    void adminDeclarations() {
        DirectExchange ex = new DirectExchange("spring.admin.ex");
        Queue q = QueueBuilder.durable("spring.admin.q").ttl(30000).maxLength(10L).build();
        admin.declareExchange(ex);
        assertEquals("spring.admin.q", admin.declareQueue(q));
        admin.declareBinding(BindingBuilder.bind(q).to(ex).with("k"));
        // A server-named queue: the admin returns the broker's name.
        String anon = admin.declareQueue().getName();
        assertNotNull(anon);
        assertEquals(true, anon.startsWith("amq.gen-"));

        template.convertAndSend("spring.admin.ex", "k", "one");
        Properties p = admin.getQueueProperties("spring.admin.q");
        assertEquals(1, ((Number) p.get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue());
        assertEquals("one", template.receiveAndConvert("spring.admin.q", 5000));
        admin.purgeQueue("spring.admin.q", false);
        assertEquals(true, admin.deleteQueue("spring.admin.q"));
        assertNull(admin.getQueueProperties("spring.admin.q"));
        admin.deleteExchange("spring.admin.ex");
    }

    /**
     * RabbitTemplate publishes with confirms into a queue with a TTL and a
     * dead-letter exchange. A message nobody takes expires on lapse's moved
     * clock into the dead-letter queue; one that the work queue's listener
     * container rejects goes there at once. A second container on the
     * dead-letter queue gets both, each with its x-death reason.
     */
    @Test
    void listenerContainerWithTtlQueueAndDeadLetterExchange() throws Exception {
        FanoutExchange dlx = new FanoutExchange("spring.dlx");
        Queue dead = QueueBuilder.durable("spring.dead").build();
        DirectExchange jobs = new DirectExchange("spring.jobs");
        Queue work = QueueBuilder.durable("spring.work").ttl(60000).deadLetterExchange("spring.dlx").build();
        admin.declareExchange(dlx);
        admin.declareQueue(dead);
        admin.declareBinding(BindingBuilder.bind(dead).to(dlx));
        admin.declareExchange(jobs);
        admin.declareQueue(work);
        admin.declareBinding(BindingBuilder.bind(work).to(jobs).with("job"));

        template.invoke(t -> {
            t.convertAndSend("spring.jobs", "job", "expire-me");
            t.waitForConfirmsOrDie(5000);
            return null;
        });
        assertEquals(1, ((Number) admin.getQueueProperties("spring.work").get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue());

        BlockingQueue<Message> deadLetters = new LinkedBlockingQueue<>();
        SimpleMessageListenerContainer deadListener = new SimpleMessageListenerContainer(cf);
        deadListener.setQueueNames("spring.dead");
        deadListener.setMessageListener(deadLetters::add);
        deadListener.start();
        try {
            Broker.advance("59s");
            assertNull(deadLetters.poll(300, TimeUnit.MILLISECONDS), "dead-lettered before its TTL");
            Broker.advance("1s");
            Message expired = deadLetters.poll(10, TimeUnit.SECONDS);
            assertNotNull(expired, "the expired message did not reach the listener");
            assertEquals("expire-me", new String(expired.getBody()));
            List<Map<String, ?>> deaths = expired.getMessageProperties().getXDeathHeader();
            assertEquals("expired", deaths.get(0).get("reason").toString());
            assertEquals("spring.work", deaths.get(0).get("queue").toString());

            SimpleMessageListenerContainer workListener = new SimpleMessageListenerContainer(cf);
            workListener.setQueueNames("spring.work");
            workListener.setMessageListener(m -> {
                throw new AmqpRejectAndDontRequeueException("rejected by the test");
            });
            workListener.start();
            try {
                template.convertAndSend("spring.jobs", "job", "reject-me");
                Message rejected = deadLetters.poll(10, TimeUnit.SECONDS);
                assertNotNull(rejected, "the rejected message did not reach the listener");
                assertEquals("reject-me", new String(rejected.getBody()));
                assertEquals("rejected", rejected.getMessageProperties().getXDeathHeader().get(0).get("reason").toString());
            } finally {
                workListener.stop();
            }
        } finally {
            deadListener.stop();
        }
        assertEquals(0, ((Number) admin.getQueueProperties("spring.work").get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue());
        assertEquals(0, ((Number) admin.getQueueProperties("spring.dead").get(RabbitAdmin.QUEUE_MESSAGE_COUNT)).intValue());
    }
}

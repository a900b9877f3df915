package lapse;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;
import com.rabbitmq.client.MessageProperties;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * lapse's own program of the flows of RabbitMQ's tutorials 1 to 5, with
 * RabbitMQ's Java client (amqp-client 5.x). It connects to $RABBITMQ_URL
 * and does one of:
 *
 * <pre>
 *   send                 1: publish "hello, lapse" to the quorum queue greetings
 *   receive              1: print what arrives on greetings (auto-ack) until SIGINT
 *   add WORD...          2: publish the words, persistent, to the quorum queue jobs
 *   work                 2: take jobs one at a time (prefetch 1), acking each, until SIGINT
 *   emit WORD...         3: publish the words to the fanout exchange logs
 *   listen               3: print what logs fans out to a queue of its own until SIGINT
 *   log SEVERITY WORD... 4: publish the words to the direct exchange direct_logs with the severity as key
 *   watch SEVERITY...    4: print what direct_logs routes for those severities until SIGINT
 *   tell KEY WORD...     5: publish the words to the topic exchange topic_logs with the key
 *   hear PATTERN...      5: print what topic_logs routes for those patterns until SIGINT
 * </pre>
 *
 * rabbitmq/tutorials_test.go runs it; docs/examples.md names the tutorials.
 */
public final class Tutorials {
    private static final Map<String, Object> QUORUM = Map.of("x-queue-type", "quorum");

    private Tutorials() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            fail("want a command: send, receive, add, work, emit, listen, log, watch, tell or hear");
        }
        String command = args[0];
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(System.getenv("RABBITMQ_URL"));
        Connection conn = factory.newConnection("tutorials " + command);
        Channel ch = conn.createChannel();
        switch (command) {
            case "send" -> {
                ch.queueDeclare("greetings", true, false, false, QUORUM);
                ch.basicPublish("", "greetings", MessageProperties.TEXT_PLAIN, bytes("hello, lapse"));
                System.out.println("sent: hello, lapse");
            }
            case "receive" -> {
                ch.queueDeclare("greetings", true, false, false, QUORUM);
                consume(conn, ch, "greetings", "greetings", true, (tag, d) -> say("got: " + text(d.getBody())));
            }
            case "add" -> {
                String job = String.join(" ", rest);
                ch.queueDeclare("jobs", true, false, false, QUORUM);
                ch.basicPublish("", "jobs", MessageProperties.PERSISTENT_TEXT_PLAIN, bytes(job));
                System.out.println("added: " + job);
            }
            case "work" -> {
                ch.queueDeclare("jobs", true, false, false, QUORUM);
                ch.basicQos(1);
                consume(conn, ch, "jobs", "jobs", false, (tag, d) -> {
                    say("took: " + text(d.getBody()));
                    ch.basicAck(d.getEnvelope().getDeliveryTag(), false);
                    say("acked: " + text(d.getBody()));
                });
            }
            case "emit" -> {
                String line = String.join(" ", rest);
                ch.exchangeDeclare("logs", "fanout");
                ch.basicPublish("logs", "", null, bytes(line));
                System.out.println("emitted: " + line);
            }
            case "listen" -> {
                ch.exchangeDeclare("logs", "fanout");
                String q = ch.queueDeclare().getQueue();
                ch.queueBind(q, "logs", "");
                consume(conn, ch, q, "logs", true, (tag, d) -> say("got: " + text(d.getBody())));
            }
            case "log", "tell" -> {
                if (rest.length < 1) {
                    fail(command + " wants a key and words");
                }
                boolean direct = command.equals("log");
                String exchange = direct ? "direct_logs" : "topic_logs";
                String line = String.join(" ", Arrays.copyOfRange(rest, 1, rest.length));
                ch.exchangeDeclare(exchange, direct ? "direct" : "topic");
                ch.basicPublish(exchange, rest[0], null, bytes(line));
                System.out.println((direct ? "logged " : "told ") + rest[0] + ": " + line);
            }
            case "watch", "hear" -> {
                if (rest.length < 1) {
                    fail(command + " wants at least one key");
                }
                String exchange = command.equals("watch") ? "direct_logs" : "topic_logs";
                ch.exchangeDeclare(exchange, command.equals("watch") ? "direct" : "topic");
                String q = ch.queueDeclare().getQueue();
                for (String key : rest) {
                    ch.queueBind(q, exchange, key);
                }
                consume(conn, ch, q, String.join(",", rest), true,
                        (tag, d) -> say("got " + d.getEnvelope().getRoutingKey() + ": " + text(d.getBody())));
            }
            default -> fail("unknown command " + command);
        }
        if (conn.isOpen()) {
            conn.close();
        }
    }

    /** Consumes until SIGINT, then closes the connection (the JVM's shutdown hook). */
    private static void consume(Connection conn, Channel ch, String queue, String what, boolean autoAck, DeliverCallback handle)
            throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                conn.close(AMQP.REPLY_SUCCESS, "interrupted", 2000);
            } catch (Exception ignored) {
                // closing anyway
            }
            stopped.countDown();
        }));
        ch.basicConsume(queue, autoAck, handle, tag -> {});
        say("waiting on " + what);
        stopped.await();
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static void fail(String why) {
        System.err.println("tutorials: " + why);
        System.exit(2);
    }
}

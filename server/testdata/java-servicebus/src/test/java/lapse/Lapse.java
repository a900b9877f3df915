package lapse;

import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The lapse these tests run against, as server/servicebus_java_test.go
 * started it: its Service Bus endpoint (the emulator connection string,
 * plain AMQP), the port of its administration API and its control API,
 * through which the tests move its clock. The clock is frozen: nothing
 * expires unless a test moves it.
 */
final class Lapse {
    static final String CONNECTION_STRING = env("SERVICEBUS_CONNECTION_STRING");
    static final int ADMIN_PORT = Integer.parseInt(env("SERVICEBUS_ADMIN_PORT"));
    static final String CONTROL_URL = env("LAPSE_CONTROL_URL");

    private Lapse() {}

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: server/servicebus_java_test.go runs these tests");
        }
        return v;
    }

    /** A client builder on lapse, as a user's on the official emulator. */
    static ServiceBusClientBuilder client() {
        return new ServiceBusClientBuilder().connectionString(CONNECTION_STRING);
    }

    /**
     * The administration client. Given the emulator connection string, the
     * Java SDK's administration client still calls https on port 443 of the
     * endpoint's host; this policy sends its requests to lapse's
     * administration port over plain HTTP instead, as docs/servicebus.md
     * tells Java users to.
     */
    static ServiceBusAdministrationClient admin() {
        HttpPipelinePolicy toLapse = (context, next) -> {
            URL u = context.getHttpRequest().getUrl();
            try {
                context.getHttpRequest().setUrl(new URL("http", u.getHost(), ADMIN_PORT, u.getFile()));
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException(e);
            }
            return next.process();
        };
        return new ServiceBusAdministrationClientBuilder().connectionString(CONNECTION_STRING).addPolicy(toLapse).buildClient();
    }

    /** A name no other test uses. */
    static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** lapse's clock now (GET /api/clock), which the tests' moves put ahead of the wall's. */
    static OffsetDateTime now() {
        HttpRequest req = HttpRequest.newBuilder(URI.create(CONTROL_URL + "/api/clock")).build();
        try {
            String body = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString()).body();
            Matcher m = Pattern.compile("\"now\"\\s*:\\s*\"([^\"]+)\"").matcher(body);
            if (!m.find()) {
                throw new IllegalStateException("clock: " + body);
            }
            return OffsetDateTime.parse(m.group(1));
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Moves lapse's clock on by d and waits until what fell due is applied. */
    static void advance(Duration d) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(CONTROL_URL + "/api/clock/advance"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"by\":\"" + d.toSeconds() + "s\"}"))
            .build();
        try {
            HttpResponse<String> resp = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() != 200) {
                throw new IllegalStateException("advance: " + resp.statusCode() + " " + resp.body());
            }
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}

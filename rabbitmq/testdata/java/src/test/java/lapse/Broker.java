package lapse;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The broker the tests run against, from the environment that
 * rabbitmq/java_test.go sets: LAPSE_AMQP_URL (the broker),
 * LAPSE_CONTROL_URL (POST /advance?by=60s moves lapse's clock and returns
 * once what fell due is applied) and LAPSE_MANAGEMENT_URL (the management
 * API, with its credentials in the URL).
 */
final class Broker {
    static final String AMQP_URL = need("LAPSE_AMQP_URL");

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private Broker() {}

    private static String need(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: rabbitmq/java_test.go runs these tests");
        }
        return v;
    }

    /** Moves lapse's clock by a Go duration such as "59s". */
    static void advance(String by) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(need("LAPSE_CONTROL_URL") + "/advance?by=" + by))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build();
        HttpResponse<String> resp = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() != 204) {
            throw new IllegalStateException("advance " + by + ": " + resp.statusCode() + " " + resp.body());
        }
    }

    /** Calls the management API; returns the response. */
    static HttpResponse<String> management(String method, String path, String reason) throws Exception {
        URI base = URI.create(need("LAPSE_MANAGEMENT_URL"));
        String auth = Base64.getEncoder().encodeToString(base.getRawUserInfo().getBytes(StandardCharsets.UTF_8));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base.getScheme() + "://" + base.getHost() + ":" + base.getPort() + path))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .header("Authorization", "Basic " + auth).timeout(Duration.ofSeconds(30));
        if (reason != null) {
            b.header("X-Reason", reason);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The management API's name of the connection whose client end is on
     * localPort ("127.0.0.1:PORT -> ..."), once it is listed (RabbitMQ
     * lists a connection up to 5 s late), or null after 20 s.
     */
    static String connectionOnPort(int localPort) throws Exception {
        Pattern p = Pattern.compile("\"name\":\"(127\\.0\\.0\\.1:" + localPort + " -> [^\"]+)\"");
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            Matcher m = p.matcher(management("GET", "/api/connections", null).body());
            if (m.find()) {
                return m.group(1);
            }
            if (System.nanoTime() > deadline) {
                return null;
            }
            Thread.sleep(250);
        }
    }

    /** Closes a connection through the management API; returns the status. */
    static int closeConnection(String name, String reason) throws Exception {
        return management("DELETE", "/api/connections/" + URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20"), reason)
                .statusCode();
    }
}

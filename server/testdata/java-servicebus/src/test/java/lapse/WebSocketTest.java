package lapse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.AmqpTransportType;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SDK's WebSocket transport (AmqpTransportType.AMQP_WEB_SOCKETS) on
 * lapse's AMQPS port and on its WebSocket port (issue 31): the service's
 * connection string, customEndpointAddress with the port (the transport
 * otherwise dials port 443), lapse's certificate trusted.
 */
class WebSocketTest {
    @BeforeAll
    static void trustLapse() throws IOException, GeneralSecurityException {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(Path.of(Lapse.env("LAPSE_CERT")))) {
            trust.setCertificateEntry("lapse", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        // The AMQP transport takes the JVM's default context.
        SSLContext.setDefault(tls);
    }

    private static void sendAndReceive(String portVariable) {
        String port = Lapse.env(portVariable);
        String q = Lapse.name("ws");
        Lapse.admin().createQueue(q);
        ServiceBusClientBuilder b = new ServiceBusClientBuilder()
            .connectionString("Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE")
            .transportType(AmqpTransportType.AMQP_WEB_SOCKETS)
            .customEndpointAddress("https://localhost:" + port)
            // A refused connection fails the test now, not after retries.
            .retryOptions(new AmqpRetryOptions().setMaxRetries(0).setTryTimeout(Duration.ofSeconds(20)));
        try (ServiceBusSenderClient s = b.sender().queueName(q).buildClient()) {
            s.sendMessage(new ServiceBusMessage("over a WebSocket"));
        }
        try (ServiceBusReceiverClient r = b.receiver().queueName(q).disableAutoComplete().buildClient()) {
            List<ServiceBusReceivedMessage> got = new ArrayList<>();
            r.receiveMessages(1, Duration.ofSeconds(10)).forEach(got::add);
            assertEquals(1, got.size());
            assertEquals("over a WebSocket", got.get(0).getBody().toString());
            r.complete(got.get(0));
        }
    }

    @Test
    void sendsAndReceivesOnTheAMQPSPort() {
        sendAndReceive("LAPSE_AMQPS_PORT");
    }

    @Test
    void sendsAndReceivesOnTheWebSocketPort() {
        sendAndReceive("LAPSE_WEBSOCKET_PORT");
    }
}

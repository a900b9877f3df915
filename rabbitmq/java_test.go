package rabbitmq_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// RabbitMQ's Java client (amqp-client 5.x) and Spring AMQP (spring-rabbit)
// against the server: the JUnit 5 tests of testdata/java (src/test), run
// once by `mvn test` against a server started here, with its management
// API and clock control in the environment (LAPSE_AMQP_URL,
// LAPSE_MANAGEMENT_URL, LAPSE_CONTROL_URL). Maven runs on the local
// repository $LAPSE_MAVEN_REPO when it is set (.ci/run sets it and fills
// it first; clienttest.MavenArgs), so the run adds little besides Maven's
// start and the tests' own time (issue 27).

// javaDir is the Maven project of the Java clients.
const javaDir = "testdata/java"

// issue 27: every JUnit test of testdata/java against lapse.
func TestIssue27_JavaClients(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	// The Java client, as the AMQP URI spec says, reads a path of "/" as
	// the vhost "" (RabbitMQ, like lapse, has none: 530 NOT_ALLOWED); the
	// URL without a path means the default vhost "/".
	env := []string{"LAPSE_AMQP_URL=" + strings.TrimSuffix(f.url, "/"), "LAPSE_CONTROL_URL=" + MustClockControl(t, f),
		"LAPSE_MANAGEMENT_URL=http://guest:guest@" + strings.TrimPrefix(a.base, "http://")}
	clienttest.MavenTests(t, javaDir, env, "", 5*time.Minute, map[string][]string{
		"lapse.AmqpClientTest":   {"publishWithConfirmsConsumeWithManualAck", "recoversAfterManagementClose", "ttlIntoDeadLetterExchange"},
		"lapse.SpringRabbitTest": {"adminDeclarations", "listenerContainerWithTtlQueueAndDeadLetterExchange"},
	})
}

// issue 27: the Java client's automatic recovery after a management-API
// close, against a real RabbitMQ (LAPSE_DIFF_RABBITMQ_URL and
// _MANAGEMENT_URL, as in CI, which must set them), so that what
// TestIssue27_JavaClients asserts of lapse is what the broker does.
func TestIssue27_JavaRecoveryOnRabbitMQ(t *testing.T) {
	url, mgmt := os.Getenv("LAPSE_DIFF_RABBITMQ_URL"), os.Getenv("LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL")
	if url == "" || mgmt == "" {
		clienttest.Need(t, "LAPSE_DIFF_RABBITMQ_URL and LAPSE_DIFF_RABBITMQ_MANAGEMENT_URL name no RabbitMQ")
	}
	env := []string{"LAPSE_AMQP_URL=" + strings.TrimSuffix(url, "/"), "LAPSE_MANAGEMENT_URL=" + mgmt}
	clienttest.MavenTests(t, javaDir, env, "AmqpClientTest#recoversAfterManagementClose", 5*time.Minute, map[string][]string{
		"lapse.AmqpClientTest": {"recoversAfterManagementClose"},
	})
}

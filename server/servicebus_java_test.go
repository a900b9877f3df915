package server

import (
	"net"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// The Java SDK (azure-messaging-servicebus, its version from the Azure SDK
// BOM) against lapse as its users would run it: the emulator connection
// string on lapse's plain AMQP port, the administration client sent to
// lapse's administration port (testdata/java-servicebus's Lapse.admin
// says how), lapse's clock frozen and moved through the control API. The
// JUnit 5 tests of testdata/java-servicebus run once by `mvn test`
// (issue 27).

// javaServiceBusDir is the Maven project of the Java Service Bus tests.
const javaServiceBusDir = "testdata/java-servicebus"

func TestIssue27_JavaServiceBus(t *testing.T) {
	m := MustStart(t, "--clock", "frozen")
	addrs := m.Addrs()
	_, adminPort, err := net.SplitHostPort(addrs["servicebusAdmin"].String())
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"SERVICEBUS_CONNECTION_STRING=Endpoint=sb://" + dialable(addrs["amqp"].String()) +
			";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
		"SERVICEBUS_ADMIN_PORT=" + adminPort,
		"LAPSE_CONTROL_URL=" + controlURL(m),
	}
	clienttest.MavenTests(t, javaServiceBusDir, env, "", 5*time.Minute, map[string][]string{
		"lapse.QueueTest": {"aProcessorHandlesEachMessageOnce", "anAbandonedDeferredMessageStaysDeferred_SB9",
			"expiresIntoTheDeadLetterQueue_SB8", "peekShowsWithoutLocking", "renewsALock", "schedulesAndCancels_SB4",
			"settlesInAllFourWays"},
		"lapse.SessionTest": {"aSessionLockRunsOutOnTheMovedClock", "acceptsANamedSessionWithItsState", "acceptsTheNextSession"},
		"lapse.TopicTest":   {"aRuleManagerListsTheRulesOfTheSubscriptionAsItIsNow", "sqlFiltersNamePropertiesWithoutRegardToCase"},
		"lapse.AdminTest":   {"createsUpdatesListsAndDeletesAQueue", "topicsSubscriptionsAndRules"},
	})
}

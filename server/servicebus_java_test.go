package server

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
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
	// WebSocketTest is TestIssue31_JavaServiceBusOverWebSockets's.
	clienttest.MavenTests(t, javaServiceBusDir, env, "!WebSocketTest", 5*time.Minute, map[string][]string{
		"lapse.QueueTest": {"aProcessorHandlesEachMessageOnce", "anAbandonedDeferredMessageStaysDeferred_SB9",
			"expiresIntoTheDeadLetterQueue_SB8", "peekShowsWithoutLocking", "renewsALock", "schedulesAndCancels_SB4",
			"settlesInAllFourWays", "theMessagePropertiesOfExpiry_SB9_SB11"},
		"lapse.SessionTest": {"aSessionLockRunsOutOnTheMovedClock", "acceptsANamedSessionWithItsState", "acceptsTheNextSession"},
		"lapse.TopicTest":   {"aRuleManagerListsTheRulesOfTheSubscriptionAsItIsNow", "sqlFiltersNamePropertiesWithoutRegardToCase"},
		"lapse.AdminTest":   {"createsUpdatesListsAndDeletesAQueue", "topicsSubscriptionsAndRules"},
		"lapse.TransactionTest": {"aRollbackSendsNothingAndLeavesTheMessageLocked", "aSecondEntityWithoutSendViaIsRefused",
			"aSendAndACompleteCommitTogether", "sendViaTheFirstEntityCommitsAcrossTwo"},
	})
}

// issue 31.1: the Java SDK's WebSocket transport (AMQP_WEB_SOCKETS, with
// customEndpointAddress naming the port) sends and receives on lapse's
// AMQPS port and on its WebSocket port, lapse's certificate trusted
// (testdata/java-servicebus's WebSocketTest).
func TestIssue31_JavaServiceBusOverWebSockets(t *testing.T) {
	m := MustStart(t)
	addrs := m.Addrs()
	_, adminPort, _ := net.SplitHostPort(addrs["servicebusAdmin"].String())
	_, amqpsPort, _ := net.SplitHostPort(addrs["amqps"].String())
	_, wsPort, _ := net.SplitHostPort(addrs["servicebusWebSocket"].String())
	env := []string{
		"SERVICEBUS_CONNECTION_STRING=Endpoint=sb://" + dialable(addrs["amqp"].String()) +
			";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
		"SERVICEBUS_ADMIN_PORT=" + adminPort,
		"LAPSE_CONTROL_URL=" + controlURL(m),
		"LAPSE_AMQPS_PORT=" + amqpsPort,
		"LAPSE_WEBSOCKET_PORT=" + wsPort,
		"LAPSE_CERT=" + MustCertFile(t, m),
	}
	clienttest.MavenTests(t, javaServiceBusDir, env, "WebSocketTest", 3*time.Minute, map[string][]string{
		"lapse.WebSocketTest": {"sendsAndReceivesOnTheAMQPSPort", "sendsAndReceivesOnTheWebSocketPort"},
	})
}

// lapse's own program of the flow of Microsoft's Java quickstarts for
// Service Bus queues and for topics and subscriptions (testdata/java-
// servicebus's Quickstart): one message and a batch of three sent, all
// four received by a processor client, which completes them.
func TestIssue27_JavaServiceBusQuickstart(t *testing.T) {
	java, cp := clienttest.Java(t, javaServiceBusDir)
	m := MustStart(t)
	admin := MustSBAdmin(t, m)
	if _, err := admin.CreateQueue(sbContext(t), "orders", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic(sbContext(t), "news", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateSubscription(sbContext(t), "news", "reader", nil); err != nil {
		t.Fatal(err)
	}
	env := []string{"SERVICEBUS_CONNECTION_STRING=Endpoint=sb://" + dialable(m.Addrs()["amqp"].String()) +
		";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;"}
	sb := MustSBClient(t, m)
	for _, c := range []struct {
		name, entity string
		args         []string
	}{
		{"queue", "orders", []string{"queue", "orders"}},
		{"topic", "news/Subscriptions/reader", []string{"topic", "news", "reader"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, java, append([]string{"-cp", cp, "lapse.Quickstart"}, c.args...)...)
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
			}
			var received []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if _, body, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(l, "received #") {
					received = append(received, body)
				}
			}
			slices.Sort(received)
			if want := []string{"Hello, lapse", "first", "second", "third"}; !slices.Equal(received, want) ||
				!strings.HasPrefix(string(out), "sent: Hello, lapse\nsent a batch of 3\n") || !strings.HasSuffix(string(out), "done\n") {
				t.Errorf("received %q, want %q; output:\n%s", received, want, out)
			}
			if left := sbPeek(t, sb, c.entity, 0); len(left) != 0 {
				t.Errorf("not completed: %q", left)
			}
		})
	}
}

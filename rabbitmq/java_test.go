package rabbitmq_test

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// RabbitMQ's Java client (amqp-client 5.x) and Spring AMQP (spring-rabbit)
// against the server: the JUnit 5 tests of testdata/java (src/test), run
// once by `mvn test` against a server started here, with its management
// API and clock control in the environment (LAPSE_AMQP_URL,
// LAPSE_MANAGEMENT_URL, LAPSE_CONTROL_URL). Maven runs offline on the
// local repository $LAPSE_MAVEN_REPO when it is set (.ci/run sets it and
// fills it first), so the run adds only Maven's start and the tests' own
// time (issue 27).

// javaDir is the Maven project of the Java clients.
const javaDir = "testdata/java"

// surefireSuite is what a Surefire XML report says of one test class.
type surefireSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Cases    []struct {
		Name    string    `xml:"name,attr"`
		Failure *struct{} `xml:"failure"`
		Error   *struct{} `xml:"error"`
	} `xml:"testcase"`
}

// mavenArgs are mvn's arguments before the goals: batch mode, and the
// local repository offline when $LAPSE_MAVEN_REPO names one.
func mavenArgs() []string {
	args := []string{"-B", "-q"}
	if repo := os.Getenv("LAPSE_MAVEN_REPO"); repo != "" {
		args = append(args, "-o", "-Dmaven.repo.local="+repo)
	}
	return args
}

// runMavenTests runs `mvn test` (only the tests of filter, Surefire's
// -Dtest, when not empty) in javaDir with env, and checks that exactly
// the tests of want (class: its test methods) ran and passed.
func runMavenTests(t *testing.T, env []string, filter string, want map[string][]string) {
	t.Helper()
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		clienttest.Need(t, "no mvn on PATH")
	}
	clienttest.Java(t, javaDir) // built: .ci/run's mvn test-compile
	reports := filepath.Join(javaDir, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		t.Fatal(err)
	}
	args := append(mavenArgs(), "test")
	if filter != "" {
		args = append(args, "-Dtest="+filter)
	}
	// wait fails the test, with Maven's output, when a test failed.
	startProgram(t, javaDir, env, mvn, args...).wait(5 * time.Minute)
	for class, cases := range want {
		b, err := os.ReadFile(filepath.Join(reports, "TEST-"+class+".xml"))
		if err != nil {
			t.Errorf("no Surefire report of %s: %v", class, err)
			continue
		}
		var s surefireSuite
		if err := xml.Unmarshal(b, &s); err != nil {
			t.Errorf("%s's report: %v", class, err)
			continue
		}
		var passed []string
		for _, c := range s.Cases {
			if c.Failure == nil && c.Error == nil {
				passed = append(passed, c.Name)
			}
		}
		sort.Strings(passed)
		if strings.Join(passed, ",") != strings.Join(cases, ",") || s.Skipped != 0 {
			t.Errorf("%s: passed %v (%d tests, %d failures, %d errors, %d skipped), want %v",
				class, passed, s.Tests, s.Failures, s.Errors, s.Skipped, cases)
		}
	}
}

// issue 27: every JUnit test of testdata/java against lapse.
func TestIssue27_JavaClients(t *testing.T) {
	f := MustServer(t)
	a := MustManagement(t, f)
	// The Java client, as the AMQP URI spec says, reads a path of "/" as
	// the vhost "" (RabbitMQ, like lapse, has none: 530 NOT_ALLOWED); the
	// URL without a path means the default vhost "/".
	env := []string{"LAPSE_AMQP_URL=" + strings.TrimSuffix(f.url, "/"), "LAPSE_CONTROL_URL=" + MustClockControl(t, f),
		"LAPSE_MANAGEMENT_URL=http://guest:guest@" + strings.TrimPrefix(a.base, "http://")}
	runMavenTests(t, env, "", map[string][]string{
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
	runMavenTests(t, env, "AmqpClientTest#recoversAfterManagementClose", map[string][]string{
		"lapse.AmqpClientTest": {"recoversAfterManagementClose"},
	})
}

package server

import (
	"os"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/clienttest"
)

// The Java fixture of sandboxes (issue 29.3): fixtures/java's JUnit 5
// extension gives each test a sandbox of one lapse, and its tests, run at
// once by JUnit's parallel execution, each make the same Cosmos DB
// database and container with the Java SDK and move their own clock by
// their own amount. One lapse for all of them, as a CI job would run it;
// Maven offline, on the local repository .ci/run fills.

// javaFixtureDir is the Maven project of the Java fixture.
const javaFixtureDir = "../fixtures/java"

func TestSandboxFixtures_Java(t *testing.T) {
	if os.Getenv("LAPSE_MAVEN_REPO") == "" {
		clienttest.Need(t, "LAPSE_MAVEN_REPO names no local Maven repository (.ci/run fills one: mvn test-compile of "+javaFixtureDir+")")
		return
	}
	m := MustStart(t)
	clienttest.MavenTests(t, javaFixtureDir, nil, "", 5*time.Minute, map[string][]string{
		"dev.lapse.junit.ParallelCartsTest": {"aCartIsGoneAfterAFortnight(Sandbox)", "aCartIsGoneAfterSixtyOneSeconds(Sandbox)",
			"aCartOutlivesFiftyNineSeconds(Sandbox)", "aCartWrittenLaterExpiresLater(Sandbox)", "setMovesTheClockToAnInstant(Sandbox)"},
		"dev.lapse.junit.NoLapseTest": {"findsTheURLInThePropertyThenTheEnvironmentThenTheDefault",
			"saysWhatWasTriedAndWhatToDoWhenNothingListens"},
	}, "-o", "-Dlapse.url="+controlURL(m))
}

// Package leakcheck is the goroutine-leak check of the test binaries
// whose tests drive the Azure SDK for Go's azcosmos: goleak's, less the
// one goroutine that SDK leaves behind by design.
package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// sdkGoroutines are goroutines of client libraries that outlive the test
// that started them, by their design, not by a bug of lapse's tests:
// azcosmos refreshes a client's account endpoints in a goroutine of its
// own, never waited for, which a request starts once five minutes have
// passed since the last refresh that succeeded, so on every request while
// none has (a test of a wrong key); when the test's server is gone by
// then, the refresh retries with backoff for seconds after the test.
var sdkGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos.(*globalEndpointManagerPolicy).Do.func2"),
}

// VerifyTestMain runs the tests of m, then fails the binary when
// goroutines other than sdkGoroutines are left (goleak.VerifyTestMain).
func VerifyTestMain(m *testing.M) {
	goleak.VerifyTestMain(m, sdkGoroutines...)
}

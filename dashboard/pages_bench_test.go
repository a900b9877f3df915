package dashboard

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lapse-emulator/lapse/core"
)

// benchFixture is a control API over 100 Service Bus queues of 1,000
// items each (100k items), every item due within the hour.
func benchFixture(b *testing.B) *fixture {
	b.Helper()
	f := MustFixture(b)
	for q := range 100 {
		k := core.EntityKey{Protocol: core.ServiceBus, Name: fmt.Sprintf("queue-%03d", q)}
		f.MustCreate(b, core.Entity{EntityKey: k, Kind: "queue", Policy: core.Policy{
			DefaultTTL: core.After(time.Hour), Rules: core.RuleIDs{DefaultTTL: "SB-2", ItemTTL: "SB-1"}}})
		for i := range 1000 {
			f.MustEnqueue(b, k, core.Item{Body: []byte(`{"n":1}`), TTL: core.After(time.Duration(i+1) * 3 * time.Second)})
		}
	}
	return f
}

// BenchmarkPages renders the pages and calls people and scripts hit
// most, over 100k items in 100 entities.
func BenchmarkPages(b *testing.B) {
	f := benchFixture(b)
	for _, c := range []struct{ name, path string }{
		{"Overview", "/"}, {"OverviewFragment", "/fragments/overview"},
		{"Entity", "/entity?protocol=servicebus&name=queue-050"}, {"ItemsFragment", "/fragments/items?protocol=servicebus&name=queue-050"},
		{"Events", "/events"}, {"Timeline", "/timeline"}, {"TimelineAPI", "/api/timeline"}, {"DeadLetters", "/deadletters"},
	} {
		path := c.path
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				f.server.Handler().ServeHTTP(w, httptest.NewRequest("GET", path, nil))
				if w.Code != 200 {
					b.Fatalf("%s: %d", path, w.Code)
				}
			}
		})
	}
	b.Run("StateHash", func(b *testing.B) {
		for b.Loop() {
			f.server.stateHash()
		}
	})
}

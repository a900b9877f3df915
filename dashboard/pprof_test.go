package dashboard

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// The control port serves Go's profiles; heap?gc=1 answers a heap profile
// (what the reliability suite calls before it reads the heap figures).
func TestPprofRoutes(t *testing.T) {
	f := MustMetricsFixture(t, nil)
	for path, want := range map[string]string{
		"/debug/pprof/":                  "goroutine",
		"/debug/pprof/heap?gc=1&debug=1": "heap profile:",
		"/debug/pprof/goroutine?debug=1": "goroutine profile:",
		"/debug/pprof/cmdline":           "",
		"/debug/pprof/no-such-profile":   "Unknown profile",
	} {
		w := httptest.NewRecorder()
		f.server.Handler().ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		wantCode := 200
		if strings.Contains(path, "no-such") {
			wantCode = 404
		}
		if w.Code != wantCode || !strings.Contains(w.Body.String(), want) {
			t.Errorf("GET %s: %d %.200q, want %d with %q", path, w.Code, w.Body.String(), wantCode, want)
		}
	}
}

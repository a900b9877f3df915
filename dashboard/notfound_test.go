package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// issue 15.6: a wrong path under /api/ answers JSON 404, never gin's 301
// (307 for a POST) to the path with or without a trailing slash, whose
// body is HTML; a known path with another method answers JSON 405.
func TestWrongAPIPathsAnswerJSON404(t *testing.T) {
	f := MustFixture(t)
	for _, c := range []call{
		{"GET", "/api/clock/", "", 404, `{"error":"no such endpoint: GET /api/clock/ (did you mean /api/clock?)"}`},
		{"GET", "/api/info/", "", 404, `{"error":"no such endpoint: GET /api/info/ (did you mean /api/info?)"}`},
		{"GET", "/api/entities/", "", 404, `{"error":"no such endpoint: GET /api/entities/ (did you mean /api/entities?)"}`},
		{"GET", "/api/events/", "", 404, `{"error":"no such endpoint: GET /api/events/ (did you mean /api/events?)"}`},
		{"GET", "/api/deadletters/", "", 404, `{"error":"no such endpoint: GET /api/deadletters/ (did you mean /api/deadletters?)"}`},
		{"GET", "/api/stream/", "", 404, `{"error":"no such endpoint: GET /api/stream/ (did you mean /api/stream?)"}`},
		{"POST", "/api/clock/advance/", `{"by":"1m"}`, 404, `{"error":"no such endpoint: POST /api/clock/advance/ (did you mean /api/clock/advance?)"}`},
		{"POST", "/api/reset/", "", 404, `{"error":"no such endpoint: POST /api/reset/ (did you mean /api/reset?)"}`},
		{"DELETE", "/api/clock/", "", 404, `{"error":"no such endpoint: DELETE /api/clock/ (did you mean /api/clock?)"}`},
		{"GET", "/api", "", 404, `{"error":"no such endpoint: GET /api"}`},
		{"GET", "/api/", "", 404, `{"error":"no such endpoint: GET /api/"}`},
		{"GET", "/api/nothing/", "", 404, `{"error":"no such endpoint: GET /api/nothing/"}`},
		{"GET", "/api/entities/servicebus", "", 404, `{"error":"no such endpoint: GET /api/entities/servicebus"}`},
		{"GET", "/API/clock", "", 404, `{"error":"no such endpoint: GET /API/clock"}`},
		{"PATCH", "/api/clock", "", 405, `{"error":"method not allowed"}`},
		{"PUT", "/api/reset", "", 405, `{"error":"method not allowed"}`},
		{"GET", "/api/clock/freeze", "", 405, `{"error":"method not allowed"}`},
	} {
		f.check(t, c)
	}
	// Nothing above moved or froze the clock.
	f.check(t, call{"GET", "/api/clock", "", 200, `{"now":"2026-01-02T03:04:05Z","mode":"real"}`})
}

// issue 15.6: the dashboard's pages keep working, and a page asked with a
// trailing slash is still redirected to the page (browsers follow it).
func TestPagesStillServedAndRedirectedFromTrailingSlash(t *testing.T) {
	f := MustFixture(t)
	for _, c := range []struct {
		method, path string
		status       int
		location     string
	}{
		{"GET", "/", 200, ""},
		{"GET", "/events", 200, ""},
		{"GET", "/rules", 200, ""},
		{"GET", "/events/", 301, "/events"},
		{"GET", "/entity/?protocol=servicebus&name=q", 301, "/entity?protocol=servicebus&name=q"},
		{"GET", "/timeline/", 301, "/timeline"},
	} {
		w := httptest.NewRecorder()
		f.server.Handler().ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		if w.Code != c.status || w.Header().Get("Location") != c.location {
			t.Errorf("%s %s: %d Location %q, want %d %q", c.method, c.path, w.Code, w.Header().Get("Location"), c.status, c.location)
		}
		if c.status == http.StatusOK && !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, w.Header().Get("Content-Type"))
		}
	}
	// A page path with another method is not redirected.
	f.check(t, call{"POST", "/events/", "", 404, `{"error":"no such endpoint: POST /events/ (did you mean /events?)"}`})
}

package httpserver_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/httpserver"
)

func TestRecoveryAnswersAPanicAndLogsIt(t *testing.T) {
	gin.SetMode(gin.TestMode)
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	r := gin.New()
	r.Use(httpserver.Recovery(log, "test API", func(c *gin.Context, err error) {
		c.String(http.StatusInternalServerError, "sorry")
	}))
	r.GET("/boom", func(*gin.Context) { panic("kaboom") })
	r.GET("/late", func(c *gin.Context) {
		c.String(http.StatusOK, "started")
		panic("after the answer began")
	})
	for _, tc := range []struct{ path, body string }{{"/boom", "sorry"}, {"/late", "started"}} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Body.String() != tc.body {
			t.Errorf("%s answered %d %q, want %q", tc.path, rec.Code, rec.Body.String(), tc.body)
		}
	}
	if got := logged.String(); strings.Count(got, "test API panic") != 2 || !strings.Contains(got, "kaboom") || !strings.Contains(got, "stack=") {
		t.Errorf("log:\n%s", got)
	}
}

package dashboard

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
)

// noRoute answers a request that no route of r serves. gin's own answer to
// a path that differs from a route by a trailing slash is a 301 (a 307 for
// a POST) with an HTML body, which scripts and curl do not follow: the
// control API answers JSON 404 instead, naming the path it does serve.
// A page of the dashboard asked with a trailing slash (/events/) is still
// redirected to the page, as browsers follow that.
func noRoute(r *gin.Engine, writeError func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		method, path := c.Request.Method, c.Request.URL.Path
		alt := slashVariant(r, path)
		api := path == "/api" || strings.HasPrefix(path, "/api/")
		if alt != "" && !api && method == http.MethodGet && served(r, http.MethodGet, alt) {
			if q := c.Request.URL.RawQuery; q != "" {
				alt += "?" + q
			}
			c.Redirect(http.StatusMovedPermanently, alt)
			c.Abort()
			return
		}
		if alt != "" {
			writeError(c, core.Errorf(core.ENOTFOUND, "no such endpoint: %s %s (did you mean %s?)", method, path, alt))
			return
		}
		writeError(c, core.Errorf(core.ENOTFOUND, "no such endpoint: %s %s", method, path))
	}
}

// slashVariant returns path with its trailing slash removed, or with one
// added, when r has a route of that exact path; "" when it has none.
func slashVariant(r *gin.Engine, path string) string {
	alt := path + "/"
	if trimmed := strings.TrimSuffix(path, "/"); trimmed != path && trimmed != "" {
		alt = trimmed
	}
	for _, rt := range r.Routes() {
		if rt.Path == alt {
			return alt
		}
	}
	return ""
}

// served reports whether r has a route of method for path exactly.
func served(r *gin.Engine, method, path string) bool {
	for _, rt := range r.Routes() {
		if rt.Method == method && rt.Path == path {
			return true
		}
	}
	return false
}

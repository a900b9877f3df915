package dashboard

import (
	"net/http/pprof"
	"strings"

	"github.com/gin-gonic/gin"
)

// pprofRoutes serves Go's profiles under /debug/pprof/ on the control port
// (net/http/pprof's handlers): the heap, goroutines, a CPU profile of
// ?seconds=N, an execution trace. /debug/pprof/heap?gc=1 runs a garbage
// collection first, so the heap figures of GET /metrics that follow are
// those of the live data. They are for measuring lapse (the reliability
// suite, the benchmarks) and for a user's report of a leak or a slow path.
func pprofRoutes(r *gin.Engine) {
	r.GET("/debug/pprof/*name", func(c *gin.Context) {
		switch name := strings.TrimPrefix(c.Param("name"), "/"); name {
		case "cmdline":
			pprof.Cmdline(c.Writer, c.Request)
		case "profile":
			pprof.Profile(c.Writer, c.Request)
		case "symbol":
			pprof.Symbol(c.Writer, c.Request)
		case "trace":
			pprof.Trace(c.Writer, c.Request)
		case "":
			pprof.Index(c.Writer, c.Request)
		default:
			pprof.Handler(name).ServeHTTP(c.Writer, c.Request)
		}
	})
}

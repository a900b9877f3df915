package httpserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/gin-gonic/gin"
)

// Recovery is the gin middleware every API of lapse starts with: a panic in
// a handler is logged, with its stack, as "<api> panic", and answered with
// writeError (a 500 without detail) unless an answer was started. An
// http.ErrAbortHandler panic goes on up, as net/http expects.
func Recovery(log *slog.Logger, api string, writeError func(c *gin.Context, err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			log.Error(api+" panic", "method", c.Request.Method, "path", c.Request.URL.Path,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			if !c.Writer.Written() {
				writeError(c, fmt.Errorf("panic: %v", r))
			}
			c.Abort()
		}()
		c.Next()
	}
}

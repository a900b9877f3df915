package rabbitmq

import (
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
)

// durable makes a handler that changes something (PUT, POST, DELETE) answer
// only once every change the engine made is durable, as RabbitMQ answers
// once its change is stored (EM-3): the reply, whatever it is, waits at its
// first byte. A failed commit turns it into a 500.
func (m *Management) durable(fn gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		w := &durableWriter{ResponseWriter: c.Writer, m: m, r: c.Request}
		c.Writer = w
		fn(c)
	}
}

// durableWriter holds a reply's first byte until the engine's changes are
// durable.
type durableWriter struct {
	gin.ResponseWriter
	m    *Management
	r    *http.Request
	once sync.Once
}

// wait waits for the engine's changes once; a failed commit becomes the
// reply's status.
func (w *durableWriter) wait() {
	w.once.Do(func() {
		if err := w.m.s.e.WaitDurable(w.r.Context()); err != nil {
			w.m.log.Error("a change of the management API could not be stored", "err", err)
			w.ResponseWriter.WriteHeader(http.StatusInternalServerError)
		}
	})
}

func (w *durableWriter) WriteHeaderNow() {
	w.wait()
	w.ResponseWriter.WriteHeaderNow()
}

func (w *durableWriter) Write(b []byte) (int, error) {
	w.wait()
	return w.ResponseWriter.Write(b)
}

func (w *durableWriter) WriteString(s string) (int, error) {
	w.wait()
	return w.ResponseWriter.WriteString(s)
}

func (w *durableWriter) Flush() {
	w.wait()
	w.ResponseWriter.Flush()
}

package cosmos

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// asService puts in front of the routes what the service's gateway does
// before a request reaches a resource, and after an answer leaves it:
//   - a path's leading slashes count as one and a trailing slash as none.
//     azure-cosmos 3.x joins the account's endpoint, which ends in '/',
//     with paths that start with '/' ("//dbs/db/colls/c/docs"), and the
//     SDKs address offers by their _self link, "offers/xyz/". The
//     signature covers the resource link, which is the same either way.
//   - response header names are written as the service writes them
//     (serviceHeaderName), whoever set them: a handler, gin or net/http.
func asService(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = trimSlashes(r.URL.Path)
		if r.URL.RawPath != "" {
			r.URL.RawPath = trimSlashes(r.URL.RawPath)
		}
		h.ServeHTTP(&serviceHeaderWriter{ResponseWriter: w}, r)
	})
}

// trimSlashes turns a path's leading run of slashes into one and drops a
// trailing one.
func trimSlashes(p string) string {
	if strings.HasPrefix(p, "//") {
		p = "/" + strings.TrimLeft(p, "/")
	}
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// canonicalHeaders are the standard HTTP headers the service writes in
// their canonical case (Content-Type, Date, ...). Every other name it
// writes in lower case: its own x-ms-* headers, lsn, and etag, although
// etag is a standard one.
var canonicalHeaders = map[string]bool{
	"Allow":                     true,
	"Cache-Control":             true,
	"Connection":                true,
	"Content-Encoding":          true,
	"Content-Length":            true,
	"Content-Location":          true,
	"Content-Type":              true,
	"Date":                      true,
	"Location":                  true,
	"Pragma":                    true,
	"Server":                    true,
	"Set-Cookie":                true,
	"Strict-Transport-Security": true,
	"Transfer-Encoding":         true,
	"Vary":                      true,
	"Www-Authenticate":          true,
}

// serviceHeaderName returns the name a header goes out under: canonical
// for the standard headers of canonicalHeaders, lower case for the rest.
// Clients that look headers up in a plain map (azure-cosmos 3.x reads
// "x-ms-continuation" from a dict) find only these.
func serviceHeaderName(name string) string {
	if out, ok := serviceHeaderNames.Load(name); ok {
		return out.(string)
	}
	out := strings.ToLower(name)
	if c := http.CanonicalHeaderKey(name); canonicalHeaders[c] {
		out = c
	}
	if serviceHeaderNameCount.Add(1) <= maxServiceHeaderNames {
		serviceHeaderNames.Store(name, out)
	}
	return out
}

// serviceHeaderNames are the names serviceHeaderName returned, by the name
// it was given: the same few on every response, renamed without an
// allocation. Handlers name headers with constants, so there are few; a
// name past the first maxServiceHeaderNames is renamed each time.
var (
	serviceHeaderNames     sync.Map
	serviceHeaderNameCount atomic.Int64
)

const maxServiceHeaderNames = 1024

// serviceHeaderWriter renames the response's headers (serviceHeaderName)
// just before they are written. Until then handlers see the usual
// http.Header, where Set and Get use canonical names.
type serviceHeaderWriter struct {
	http.ResponseWriter
	renamed bool
}

// rename renames the headers once, before the first write.
func (w *serviceHeaderWriter) rename() {
	if w.renamed {
		return
	}
	w.renamed = true
	h := w.ResponseWriter.Header()
	for name, values := range h {
		// Most keys are in the service's form already: lower case, as
		// lapse's handlers set them, or a canonical standard name.
		if !hasUpper(name) || canonicalHeaders[name] {
			continue
		}
		if out := serviceHeaderName(name); out != name {
			delete(h, name)
			if had, ok := h[out]; ok {
				values = append(had, values...)
			}
			h[out] = values
		}
	}
}

// hasUpper reports whether s has an upper-case ASCII letter.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// WriteHeader renames the headers and writes them with status code.
func (w *serviceHeaderWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.rename()
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write renames the headers, if not done yet, and writes b.
func (w *serviceHeaderWriter) Write(b []byte) (int, error) {
	w.rename()
	return w.ResponseWriter.Write(b)
}

// Flush sends what is buffered, as gin's writer expects of the writer it
// wraps.
func (w *serviceHeaderWriter) Flush() {
	w.rename()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the writer underneath, for http.ResponseController.
func (w *serviceHeaderWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

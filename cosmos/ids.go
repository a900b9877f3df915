package cosmos

import (
	"net/http"
	"net/url"
	"strings"
)

// The REST API takes no query string: what follows a '?' in a request's
// target is part of its path. The JS SDK builds an item's path with
// encodeURI, which leaves '?' as it is, so an item whose id has one is
// asked for as ".../docs/a?b"; it signs the link with the id "a?b", and
// the service's gateway reads it so. azcosmos escapes the '?' (%3F) and
// needs nothing of this.

// queryInID hands h requests whose query string belongs to an item's id:
// on a path ".../docs/{id}" (the id possibly empty), the '?' and what
// follows it are joined back to the id, escaped as part of one segment.
// Other paths keep their query string, which no route reads.
func queryInID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" || r.URL.ForceQuery {
			joinQueryToID(r.URL)
		}
		h.ServeHTTP(w, r)
	})
}

// joinQueryToID moves u's query string into the id of the item u's path
// names, if it names one: /dbs/{db}/colls/{coll}/docs/{id}.
func joinQueryToID(u *url.URL) {
	raw := u.EscapedPath()
	segs := strings.Split(raw, "/") // "", "dbs", db, "colls", coll, "docs", id
	if len(segs) != 7 || segs[0] != "" || segs[1] != "dbs" || segs[3] != "colls" || segs[5] != "docs" {
		return
	}
	// A '/' after the '?' stays in the id's one segment.
	joined := raw + "%3F" + strings.ReplaceAll(u.RawQuery, "/", "%2F")
	path, err := url.PathUnescape(joined)
	if err != nil {
		return
	}
	u.Path, u.RawPath = path, joined
	u.RawQuery, u.ForceQuery = "", false
}

package cosmos

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// The service indexes every path of a container, and writes its indexing
// policy back with what it filled in: the indexing mode, automatic, the
// included paths ("/*" when none are given) and, among the excluded ones,
// the _etag property's path, which it never indexes. lapse indexes
// nothing (a query reads every document of its scope), so the policy is
// kept only to be answered, and checked where the service refuses a
// request for it: a vector index without its vector embedding, an ORDER BY
// on several properties without its composite index.

// etagPath is the excluded path the service adds to every indexing policy.
const etagPath = `/"_etag"/?`

// fillIndexingPolicy sets container o's indexingPolicy as the service
// writes it: its defaults when it has none, else what it lacks filled in.
// A vector index whose path is not a vector embedding of the container's
// vectorEmbeddingPolicy is the service's 400.
func fillIndexingPolicy(o *query.Object) error {
	v, ok := o.Get("indexingPolicy")
	if !ok || v == nil {
		fillDefault(o, "indexingPolicy", defaultIndexingPolicy)
		return nil
	}
	p, ok := v.(*query.Object)
	if !ok {
		return errorf(http.StatusBadRequest, "The indexing policy is invalid.")
	}
	mode, _ := getString(p, "indexingMode")
	if mode == "" {
		mode = "consistent"
	}
	mode = strings.ToLower(mode)
	p.Set("indexingMode", mode)
	if a, ok := p.Get("automatic"); !ok || a == nil {
		p.Set("automatic", mode != "none")
	}
	if mode != "none" {
		if inc, ok := p.Get("includedPaths"); !ok || inc == nil {
			p.Set("includedPaths", []any{pathObject("/*")})
		}
		exc, _ := p.Get("excludedPaths")
		paths, _ := exc.([]any)
		if !hasPath(paths, etagPath) {
			paths = append(paths, pathObject(etagPath))
		}
		p.Set("excludedPaths", paths)
	}
	return checkVectorIndexes(o, p)
}

// pathObject is {"path": path}.
func pathObject(path string) *query.Object {
	o := &query.Object{}
	o.Set("path", path)
	return o
}

// hasPath reports whether one of the {"path": ...} objects has path.
func hasPath(paths []any, path string) bool {
	for _, v := range paths {
		if o, ok := v.(*query.Object); ok {
			if p, _ := getString(o, "path"); p == path {
				return true
			}
		}
	}
	return false
}

// checkVectorIndexes refuses, as the service does, a vector index of
// policy p whose path is not the path of a vector embedding of container
// o's vectorEmbeddingPolicy.
func checkVectorIndexes(o, p *query.Object) error {
	v, _ := p.Get("vectorIndexes")
	indexes, _ := v.([]any)
	if len(indexes) == 0 {
		return nil
	}
	var embeddings []any
	if ev, ok := o.Get("vectorEmbeddingPolicy"); ok {
		if eo, ok := ev.(*query.Object); ok {
			list, _ := eo.Get("vectorEmbeddings")
			embeddings, _ = list.([]any)
		}
	}
	for _, ix := range indexes {
		io, ok := ix.(*query.Object)
		if !ok {
			return errorf(http.StatusBadRequest, "The vector index is invalid.")
		}
		path, _ := getString(io, "path")
		if !hasPath(embeddings, path) {
			return errVectorIndexPath(path)
		}
	}
	return nil
}

// errVectorIndexPath is the service's 400 for a vector index without its
// embedding. The service writes the path inside its message's JSON with
// each '/' escaped as "\/", which is what its clients see.
func errVectorIndexPath(path string) *apiError {
	text := "The Vector Indexing Policy's path::" + path + " not matching in Embedding's path."
	inner := jsonString(text)
	return &apiError{status: http.StatusBadRequest, code: "BadRequest", msg: text,
		raw: `Message: {"Errors":[` + strings.ReplaceAll(inner, "/", `\/`) + `]}`}
}

// compositePath is one path of a composite index.
type compositePath struct {
	path string
	desc bool
}

// compositeIndexes reads the composite indexes of a container's resource.
func compositeIndexes(resource []byte) [][]compositePath {
	v, err := query.Decode(resource)
	if err != nil {
		return nil
	}
	o, _ := v.(*query.Object)
	if o == nil {
		return nil
	}
	pv, _ := o.Get("indexingPolicy")
	p, _ := pv.(*query.Object)
	if p == nil {
		return nil
	}
	cv, _ := p.Get("compositeIndexes")
	list, _ := cv.([]any)
	var out [][]compositePath
	for _, ci := range list {
		paths, _ := ci.([]any)
		var index []compositePath
		for _, pp := range paths {
			po, ok := pp.(*query.Object)
			if !ok {
				continue
			}
			path, _ := getString(po, "path")
			order, _ := getString(po, "order")
			index = append(index, compositePath{path: path, desc: strings.EqualFold(order, "descending")})
		}
		out = append(out, index)
	}
	return out
}

// servesOrderBy reports whether composite index ci serves an ORDER BY on
// paths: the same paths in the same sequence, each in its order, or each
// in the opposite order.
func servesOrderBy(ci []compositePath, paths []query.OrderByPath) bool {
	if len(ci) != len(paths) {
		return false
	}
	same, opposite := true, true
	for i, p := range paths {
		if ci[i].path != p.Path {
			return false
		}
		same = same && ci[i].desc == p.Desc
		opposite = opposite && ci[i].desc != p.Desc
	}
	return same || opposite
}

// errNoCompositeIndex is the service's 400 for an ORDER BY on several
// properties that no composite index serves.
func errNoCompositeIndex() *apiError {
	return errorf(http.StatusBadRequest, "The order by query does not have a corresponding composite index that it can be served from.")
}

// checkOrderByIndex refuses, as the service does, query q of container ct
// when it sorts on more than one property and no composite index of the
// container's indexing policy serves that ORDER BY (servesOrderBy).
func checkOrderByIndex(ct *container, q *query.Query) error {
	paths, ok := q.OrderByPaths()
	if !ok || len(paths) < 2 {
		return nil
	}
	for _, ci := range compositeIndexes(ct.meta.Resource) {
		if servesOrderBy(ci, paths) {
			return nil
		}
	}
	return errNoCompositeIndex()
}

// refuseUnindexedOrderBy answers the request with checkOrderByIndex's
// error, if any, and reports whether it did: queryItems' one-line check.
func (s *Server) refuseUnindexedOrderBy(c *gin.Context, ct *container, q *query.Query) bool {
	if err := checkOrderByIndex(ct, q); err != nil {
		s.writeError(c, err)
		return true
	}
	return false
}

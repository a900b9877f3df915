package cosmos

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// maxPatchOps is the service's limit on operations in one patch.
const maxPatchOps = 10

// patchOp is one operation of a partial document update.
type patchOp struct {
	op    string
	path  []string
	from  []string
	raw   string
	value any
}

// patchRequest is a patch body: an optional condition ("from c where ...")
// and its operations.
type patchRequest struct {
	condition string
	ops       []patchOp
}

// readPatch reads a patch body.
func readPatch(o *query.Object) (*patchRequest, error) {
	pr := &patchRequest{}
	if v, ok := o.Get("condition"); ok && v != nil {
		cond, ok := v.(string)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "The patch condition must be a string.")
		}
		pr.condition = cond
	}
	v, _ := o.Get("operations")
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, errorf(http.StatusBadRequest, "Patch request has no operations.")
	}
	if len(arr) > maxPatchOps {
		return nil, errorf(http.StatusBadRequest, "Patch request has more than %d operations.", maxPatchOps)
	}
	for i, x := range arr {
		oo, ok := x.(*query.Object)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "Patch operation %d is not an object.", i)
		}
		var op patchOp
		op.op, _ = getString(oo, "op")
		op.op = strings.ToLower(op.op)
		path, ok := getString(oo, "path")
		if !ok || !strings.HasPrefix(path, "/") {
			return nil, errorf(http.StatusBadRequest, "Patch operation %d has an invalid path.", i)
		}
		op.raw, op.path = path, splitPointer(path)
		switch op.op {
		case "add", "set", "replace", "incr":
			val, ok := oo.Get("value")
			if !ok {
				return nil, errorf(http.StatusBadRequest, "Patch operation %d (%s) has no value.", i, op.op)
			}
			op.value = val
			if _, isNum := val.(float64); op.op == "incr" && !isNum {
				return nil, errorf(http.StatusBadRequest, "Patch operation %d (incr) needs a number value.", i)
			}
		case "remove":
		case "move":
			from, ok := getString(oo, "from")
			if !ok || !strings.HasPrefix(from, "/") {
				return nil, errorf(http.StatusBadRequest, "Patch operation %d (move) has an invalid from path.", i)
			}
			op.from = splitPointer(from)
		default:
			return nil, errorf(http.StatusBadRequest, "Patch operation %d has an unknown op '%s'.", i, op.op)
		}
		pr.ops = append(pr.ops, op)
	}
	return pr, nil
}

// patchBody reads a patch body: {"condition", "operations"}, or the bare
// array of operations the JS SDK sends for item.patch([...]). Anything
// else reads as a body without operations.
func patchBody(v any) *query.Object {
	switch x := v.(type) {
	case *query.Object:
		return x
	case []any:
		return &query.Object{Keys: []string{"operations"}, Vals: []any{x}}
	}
	return &query.Object{}
}

// splitPointer splits a JSON pointer into its unescaped segments.
func splitPointer(p string) []string {
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// protected reports whether path may not be patched: id, the system
// properties and the partition key.
func protected(path []string, def *pkDef) bool {
	if len(path) == 1 && (path[0] == "id" || strings.HasPrefix(path[0], "_")) {
		return true
	}
	if def == nil {
		return false
	}
	for _, segs := range def.split {
		if len(segs) == len(path) {
			same := true
			for i := range segs {
				same = same && segs[i] == path[i]
			}
			if same {
				return true
			}
		}
	}
	return false
}

// apply applies the operations to doc, in order; any failure leaves the
// stored item as it was (the caller writes only on success).
func (pr *patchRequest) apply(doc *query.Object, def *pkDef) error {
	for _, op := range pr.ops {
		if protected(op.path, def) || op.from != nil && protected(op.from, def) {
			return errorf(http.StatusBadRequest, "Patch operation on '%s' is not allowed: id, system properties and the partition key cannot be changed.", op.raw)
		}
		if err := applyOp(doc, op); err != nil {
			return err
		}
	}
	return nil
}

// applyOp applies one operation.
func applyOp(doc *query.Object, op patchOp) error {
	if op.op == "move" {
		v, err := removeAt(doc, op.from, "move")
		if err != nil {
			return err
		}
		return setAt(doc, op.path, v, "add")
	}
	if op.op == "remove" {
		_, err := removeAt(doc, op.path, "remove")
		return err
	}
	return setAt(doc, op.path, op.value, op.op)
}

// parentOf walks to the container of the last segment of path.
func parentOf(doc *query.Object, path []string, op string) (any, error) {
	var cur any = doc
	for _, seg := range path[:len(path)-1] {
		switch x := cur.(type) {
		case *query.Object:
			v, ok := x.Get(seg)
			if !ok {
				return nil, errPatchPath(op, path)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, errPatchPath(op, path)
			}
			cur = x[i]
		default:
			return nil, errPatchPath(op, path)
		}
	}
	return cur, nil
}

// errPatchPath is the 400 of an operation whose path does not exist.
func errPatchPath(op string, path []string) *apiError {
	return errorf(http.StatusBadRequest, "Patch operation '%s' failed: the path '/%s' does not exist in the document.", op, strings.Join(path, "/"))
}

// setAt performs add, set, replace and incr at path.
func setAt(doc *query.Object, path []string, v any, op string) error {
	parent, err := parentOf(doc, path, op)
	if err != nil {
		return err
	}
	last := path[len(path)-1]
	switch x := parent.(type) {
	case *query.Object:
		old, exists := x.Get(last)
		switch op {
		case "replace":
			if !exists {
				return errPatchPath(op, path)
			}
		case "incr":
			if exists {
				n, ok := old.(float64)
				if !ok {
					return errorf(http.StatusBadRequest, "Patch operation 'incr' failed: the value at '/%s' is not a number.", strings.Join(path, "/"))
				}
				v = n + v.(float64)
				if math.IsInf(v.(float64), 0) {
					return errorf(http.StatusBadRequest, "Patch operation 'incr' failed: the result overflows.")
				}
			}
		}
		x.Set(last, v)
		return nil
	case []any:
		i, idxErr := strconv.Atoi(last)
		if op == "add" && last == "-" {
			i, idxErr = len(x), nil
		}
		if idxErr != nil || i < 0 || i > len(x) || i == len(x) && op != "add" {
			return errPatchPath(op, path)
		}
		switch op {
		case "add":
			x = append(x, nil)
			copy(x[i+1:], x[i:])
			x[i] = v
		case "incr":
			n, ok := x[i].(float64)
			if !ok {
				return errorf(http.StatusBadRequest, "Patch operation 'incr' failed: the value at '/%s' is not a number.", strings.Join(path, "/"))
			}
			x[i] = n + v.(float64)
		default: // set, replace
			x[i] = v
		}
		return replaceIn(doc, path[:len(path)-1], x)
	}
	return errPatchPath(op, path)
}

// removeAt removes the value at path and returns it.
func removeAt(doc *query.Object, path []string, op string) (any, error) {
	parent, err := parentOf(doc, path, op)
	if err != nil {
		return nil, err
	}
	last := path[len(path)-1]
	switch x := parent.(type) {
	case *query.Object:
		v, ok := x.Get(last)
		if !ok {
			return nil, errPatchPath(op, path)
		}
		x.Delete(last)
		return v, nil
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(x) {
			return nil, errPatchPath(op, path)
		}
		v := x[i]
		x = append(x[:i:i], x[i+1:]...)
		return v, replaceIn(doc, path[:len(path)-1], x)
	}
	return nil, errPatchPath(op, path)
}

// replaceIn stores a changed array back at path (slices change length).
func replaceIn(doc *query.Object, path []string, arr []any) error {
	if len(path) == 0 {
		return nil
	}
	parent, err := parentOf(doc, path, "set")
	if err != nil {
		return err
	}
	last := path[len(path)-1]
	switch x := parent.(type) {
	case *query.Object:
		x.Set(last, arr)
	case []any:
		i, _ := strconv.Atoi(last)
		x[i] = arr
	}
	return nil
}

// patchItem answers PATCH .../docs/{id}: the operations applied to the
// stored document, if its condition holds (else 412), written as a new
// version (its TTL restarts, CO-1).
func (s *Server) patchItem(c *gin.Context) {
	ct, pk, err := s.pointRequest(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	b, err := readBody(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	v, err := query.Decode(b)
	if err != nil {
		s.writeError(c, errorf(http.StatusBadRequest, "The request payload is invalid. Ensure to provide a valid request payload."))
		return
	}
	pr, err := readPatch(patchBody(v))
	if err != nil {
		s.writeError(c, err)
		return
	}
	it, etag, err := s.patch(c, ct, pk, param(c, "id"), pr, rqIfMatch.of(c))
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.itemSession(c, ct, it.Group, it.Seq)
	setLSN(c, it.Seq)
	setCharge(c, writeCharge(len(it.Body)))
	writeResource(c, http.StatusOK, etag, it.Body, true)
}

// patch applies pr to item id of partition pk.
func (s *Server) patch(c *gin.Context, ct *container, pk partitionKey, id string, pr *patchRequest, ifMatchETag string) (core.Item, string, error) {
	key := itemKey(pk.canon(), id)
	var etag string
	out, commit, err := s.change(ct, func(now time.Time, read reader) ([]string, []core.Item, error) {
		old, rid, err := stored(read, key, ifMatchETag)
		if err != nil {
			return nil, nil, err
		}
		d, err := s.patched(ct, old.Body, pk, pr, now)
		if err != nil {
			return nil, nil, err
		}
		var put core.Item
		put, etag, err = s.prepare(ct, d, rid, now)
		return nil, []core.Item{put}, err
	})
	if err == nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		return core.Item{}, "", err
	}
	return out[0], etag, nil
}

// patched returns the document body with pr applied at now, checked as a
// write; a condition that does not hold is a 412.
func (s *Server) patched(ct *container, body []byte, pk partitionKey, pr *patchRequest, now time.Time) (*doc, error) {
	if pr.condition != "" {
		q, err := query.Parse("SELECT VALUE 1 " + pr.condition)
		if err != nil {
			return nil, err
		}
		hit := false
		old, err := query.Decode(body)
		if err != nil {
			return nil, err
		}
		err = q.Run(func(yield func(any) bool) { yield(old) }, nil, query.Options{Now: now}, func(any) bool { hit = true; return false })
		if err != nil {
			return nil, err
		}
		if !hit {
			return nil, errPrecondition()
		}
	}
	o, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	if err := pr.apply(o, ct.meta.PartitionKey); err != nil {
		return nil, err
	}
	return s.checkDoc(ct, o, pk, true)
}

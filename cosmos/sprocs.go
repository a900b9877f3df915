package cosmos

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
	"github.com/lapse-emulator/lapse/cosmos/script"
)

// executeSproc answers POST .../sprocs/{id}: the stored procedure runs on
// the partition key of the request, with the JSON array of the body as its
// arguments. What it writes is one transaction (txn), written through
// Server.change as a batch's is: all of it, or nothing when the script
// throws. No lock of lapse is held while it runs.
func (s *Server) executeSproc(c *gin.Context) {
	ct, err := s.lookupContainer(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	sc, ok := ct.scriptSource(kindSprocs, param(c, "id"))
	if !ok {
		s.writeError(c, errNotFound())
		return
	}
	pk, err := pointKey(c, ct)
	if err != nil {
		s.writeError(c, err)
		return
	}
	args, err := sprocArgs(c)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var (
		res    script.Result
		charge float64
	)
	written, commit, err := s.change(ct, func(now time.Time, read reader) ([]string, []core.Item, error) {
		h := &scriptHost{t: s.newTxn(ct, pk, now, read)}
		res, err = s.scripts.Run(script.Call{Source: sc.Body, Args: args, Host: h,
			SelfLink: ct.selfLink(), AltLink: ct.altLink()})
		if err != nil {
			return nil, nil, scriptError(err)
		}
		charge = h.charge
		return h.t.removes, h.t.puts, nil
	})
	if err == nil && commit != nil {
		err = commit.Wait(c.Request.Context())
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	lsn := s.containerLSN(ct.key)
	if len(written) > 0 {
		lsn = written[len(written)-1].Seq
	}
	s.itemSession(c, ct, pk.canon(), lsn)
	setLSN(c, lsn)
	setCharge(c, 1+charge)
	if strings.EqualFold(rqScriptEnableLogging.of(c), "true") {
		c.Header("x-ms-documentdb-script-log-results", escapeLog(strings.Join(res.Log, "\n")))
	}
	writeJSON(c, http.StatusOK, res.Body)
}

// sprocArgs reads a stored procedure's arguments: the body's JSON array
// (a single value is one argument), each as JSON.
func sprocArgs(c *gin.Context) ([][]byte, error) {
	b, err := readBody(c)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return nil, err
	}
	v, err := query.Decode(b)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "The stored procedure's parameters are not valid JSON.")
	}
	arr, ok := v.([]any)
	if !ok {
		arr = []any{v}
	}
	out := make([][]byte, len(arr))
	for i, a := range arr {
		out[i] = query.AppendJSON(nil, a)
	}
	return out, nil
}

// selfLink and altLink are a container's links as a script sees them.
func (ct *container) selfLink() string {
	return "dbs/" + ridText(ct.meta.RID[:4]) + "/colls/" + ct.rid() + "/"
}

func (ct *container) altLink() string { return ct.altPath }

// scriptError is a script's failure as the service answers it.
func scriptError(err error) error {
	var se *script.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case script.Syntax:
		return errorf(http.StatusBadRequest, "Encountered exception while compiling Javascript. Exception = %s", se.Message)
	case script.Timeout:
		// The service's words for a script stopped at its time bound, as
		// users report them from the SDKs.
		return errorf(http.StatusRequestTimeout, "The requested operation exceeded maximum alloted time. Learn more: https://aka.ms/cosmosdb-tsg-service-request-timeout")
	case script.Memory:
		return errorf(http.StatusRequestEntityTooLarge, "Encountered exception while executing function. Exception = Error: %s", se.Message)
	}
	status := http.StatusBadRequest
	if se.Status != 0 {
		status = se.Status
	}
	return errorf(status, "Encountered exception while executing function. Exception = %s", se.Message)
}

// escapeLog escapes a script's log for its header, as
// encodeURIComponent does.
func escapeLog(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || strings.IndexByte("-_.!~*'()", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}

// scriptHost serves a script's operations inside its transaction.
type scriptHost struct {
	t      *txn
	charge float64
}

// scriptArgs are the arguments of an operation of a script.
type scriptArgs struct {
	link    string
	doc     *query.Object
	options *query.Object
	query   *query.Object
}

// Op runs one operation of the script (script.Host).
func (h *scriptHost) Op(op string, raw []byte) ([]byte, error) {
	v, err := query.Decode(raw)
	o, ok := v.(*query.Object)
	if err != nil || !ok {
		return nil, &script.OpError{Status: http.StatusBadRequest, Message: "The operation's arguments are not valid."}
	}
	var a scriptArgs
	a.link, _ = getString(o, "link")
	if d, ok := o.Get("doc"); ok {
		if a.doc, ok = d.(*query.Object); !ok {
			return nil, &script.OpError{Status: http.StatusBadRequest, Message: "The document must be an object."}
		}
	}
	if x, ok := o.Get("options"); ok {
		a.options, _ = x.(*query.Object)
	}
	if x, ok := o.Get("query"); ok {
		a.query, _ = x.(*query.Object)
	}
	out, err := h.op(op, a)
	if err != nil {
		ae := toAPIError(err)
		return nil, &script.OpError{Status: ae.status, Message: ae.msg}
	}
	return out, nil
}

// op runs one operation as the transaction's next.
func (h *scriptHost) op(op string, a scriptArgs) ([]byte, error) {
	t := h.t
	etag := ""
	if a.options != nil {
		etag, _ = getString(a.options, "etag")
	}
	switch op {
	case "create", "upsert":
		if a.doc == nil {
			return nil, errorf(http.StatusBadRequest, "The document is missing.")
		}
		if _, ok := a.doc.Get("id"); !ok {
			if a.options != nil {
				if v, _ := a.options.Get("disableAutomaticIdGeneration"); v == true {
					return nil, errorf(http.StatusBadRequest, "The input content is invalid because the required properties - 'id; ' - are missing")
				}
			}
			a.doc.Set("id", uuid.NewString())
		}
		id, _ := getString(a.doc, "id")
		return h.result(t.do(batchOp{kind: op, id: id, body: a.doc, ifMatch: etag}))
	case "replace":
		if a.doc == nil {
			return nil, errorf(http.StatusBadRequest, "The document is missing.")
		}
		return h.result(t.do(batchOp{kind: op, id: h.docID(a.link), body: a.doc, ifMatch: etag}))
	case "read":
		return h.result(t.do(batchOp{kind: op, id: h.docID(a.link)}))
	case "delete":
		_, err := h.result(t.do(batchOp{kind: op, id: h.docID(a.link), ifMatch: etag}))
		return nil, err
	case "query":
		return h.query(a.query)
	}
	return nil, errorf(http.StatusBadRequest, "Unknown operation %s.", op)
}

// result is an operation's document, and counts its charge.
func (h *scriptHost) result(r batchResult, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	h.charge += r.charge()
	return r.body, nil
}

// docID returns the id of the document a link names: its last segment,
// an id of the partition, or the _rid of one of its documents.
func (h *scriptHost) docID(link string) string {
	seg := strings.TrimSuffix(link, "/")
	if i := strings.LastIndex(seg, "/docs/"); i >= 0 {
		seg = seg[i+len("/docs/"):]
	}
	if h.t.state(seg).exists {
		return seg
	}
	docs, _ := h.t.docs()
	for _, d := range docs {
		v, err := query.Decode(d)
		if o, ok := v.(*query.Object); err == nil && ok {
			if rid, _ := getString(o, "_rid"); rid == seg {
				id, _ := getString(o, "id")
				return id
			}
		}
	}
	return seg
}

// query runs a query over the partition as the transaction sees it.
func (h *scriptHost) query(q *query.Object) ([]byte, error) {
	text, ok := getString(q, "query")
	if !ok {
		return nil, errorf(http.StatusBadRequest, "The query is missing.")
	}
	qr := &queryRequest{text: text, params: query.Params{}}
	if ps, ok := q.Get("parameters"); ok {
		arr, _ := ps.([]any)
		for _, p := range arr {
			if po, ok := p.(*query.Object); ok {
				name, _ := getString(po, "name")
				val, ok := po.Get("value")
				if !ok {
					val = query.Undefined
				}
				qr.params[name] = val
			}
		}
	}
	var err error
	if qr.q, err = query.Parse(text); err != nil {
		return nil, err
	}
	docs, err := h.t.docs()
	if err != nil {
		return nil, err
	}
	out := []byte{'['}
	n := 0
	err = h.t.s.run(qr, h.t.ct, docs, func(row []byte) bool {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, row...)
		return true
	})
	h.charge += pageCharge(len(out))
	return append(out, ']'), err
}

// docs returns the bodies of the partition's documents as the
// transaction sees them: the stored ones, in their order, with its own
// changes, then those it created. Each stored one counts as read, so that
// a change to it before the commit plans the transaction again.
func (t *txn) docs() ([][]byte, error) {
	var keys []string
	err := t.s.cfg.Engine.ScanGroup(t.now, t.ct.key, t.canon, func(it *core.Item) bool {
		keys = append(keys, it.Key)
		return true
	})
	if err != nil {
		return nil, err
	}
	var out [][]byte
	seen := map[string]bool{}
	for _, key := range keys {
		seen[key] = true
		if st, ok := t.states[key]; ok {
			if st.exists {
				out = append(out, st.body)
			}
			continue
		}
		if it, ok, err := t.read(key); err != nil {
			return nil, err
		} else if ok {
			out = append(out, it.Body)
		}
	}
	for _, p := range t.puts {
		if !seen[p.Key] {
			out = append(out, p.Body)
		}
	}
	return out, nil
}

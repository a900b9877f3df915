package cosmos

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/script"
)

// The headers that name the triggers of an item write.
const (
	hdrPreTriggers  = "x-ms-documentdb-pre-trigger-include"
	hdrPostTriggers = "x-ms-documentdb-post-trigger-include"
)

// hasTriggers reports whether an item write names triggers.
func hasTriggers(c *gin.Context) bool {
	return rqPreTriggers.of(c) != "" || rqPostTriggers.of(c) != ""
}

// triggersOf returns the triggers a header names (ids separated by
// commas), each of type typ and one that fires on operation op ("Create",
// "Replace", "Upsert", "Delete"): the service's 400 for one of another
// type or operation or none of that id.
func triggersOf(c *gin.Context, ct *container, h requestHeader, typ, op string) ([]scriptOf, error) {
	var out []scriptOf
	for _, id := range strings.Split(h.of(c), ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		sc, ok := ct.scriptSource(kindTriggers, id)
		if !ok {
			return nil, errorf(http.StatusBadRequest, "Trigger '%s' does not exist in the collection.", id)
		}
		sc.TriggerType = triggerTypes[strings.ToLower(sc.TriggerType)]
		sc.TriggerOperation = triggerOps[strings.ToLower(sc.TriggerOperation)]
		if sc.TriggerType != typ {
			return nil, errorf(http.StatusBadRequest, "Trigger '%s' is a %s-trigger; it cannot be used as a %s-trigger.", id, strings.ToLower(sc.TriggerType), strings.ToLower(typ))
		}
		if !firesOn(sc.TriggerOperation, op) {
			return nil, errorf(http.StatusBadRequest, "The trigger operation type '%s' of trigger '%s' does not match the request's operation, %s.", sc.TriggerOperation, id, op)
		}
		out = append(out, sc)
	}
	return out, nil
}

// firesOn reports whether a trigger of operation tOp fires on a request's
// op: All on every one, Update and Upsert on a replace or an upsert, else
// its own.
func firesOn(tOp, op string) bool {
	switch tOp {
	case "All", op:
		return true
	case "Update", "Upsert":
		return op == "Replace" || op == "Upsert"
	}
	return false
}

// triggered answers an item write that names triggers: the pre-triggers
// change the request's body in turn, the write is planned, the
// post-triggers see its result and may write too, and all of it is one
// transaction (txn) written through Server.change: a trigger that throws
// leaves nothing written. op is "Create", "Upsert", "Replace" or
// "Delete"; id the item's for a replace or delete; body the request's.
func (s *Server) triggered(c *gin.Context, ct *container, op, id string, body []byte) {
	pre, err := triggersOf(c, ct, rqPreTriggers, "Pre", op)
	if err == nil {
		var post []scriptOf
		if post, err = triggersOf(c, ct, rqPostTriggers, "Post", op); err == nil {
			s.writeTriggered(c, ct, op, id, body, pre, post)
			return
		}
	}
	s.writeError(c, err)
}

// writeTriggered is triggered's write.
func (s *Server) writeTriggered(c *gin.Context, ct *container, op, id string, body []byte, pre, post []scriptOf) {
	header, present, err := parseKeyHeader(c.Request)
	if err != nil {
		s.writeError(c, err)
		return
	}
	var (
		res   batchResult
		group string
	)
	written, commit, err := s.change(ct, func(now time.Time, read reader) ([]string, []core.Item, error) {
		req := body
		for _, tr := range pre {
			out, err := s.scripts.Run(script.Call{Source: tr.Body, Operation: op, Request: req,
				SelfLink: ct.selfLink(), AltLink: ct.altLink()})
			if err != nil {
				return nil, nil, scriptError(err)
			}
			req = out.Request
		}
		pk := header
		bop := batchOp{kind: strings.ToLower(op), id: id, ifMatch: rqIfMatch.of(c)}
		if op != "Delete" {
			d, err := s.readDoc(ct, req, header, present)
			if err != nil {
				return nil, nil, err
			}
			pk, bop.body = d.pk, d.obj
			if bop.id == "" {
				bop.id = d.id
			}
		} else if pk, err = pointKey(c, ct); err != nil {
			return nil, nil, err
		}
		group = pk.canon()
		t := s.newTxn(ct, pk, now, read)
		if res, err = t.do(bop); err != nil {
			return nil, nil, err
		}
		h := &scriptHost{t: t}
		for _, tr := range post {
			if _, err := s.scripts.Run(script.Call{Source: tr.Body, Operation: op, Request: req, Response: res.body,
				Host: h, SelfLink: ct.selfLink(), AltLink: ct.altLink()}); err != nil {
				return nil, nil, scriptError(err)
			}
		}
		return t.removes, t.puts, nil
	})
	if err == nil && commit != nil {
		err = commit.Wait(c.Request.Context())
	}
	var lsn uint64
	switch {
	case err != nil:
	case len(written) > 0:
		lsn = written[0].Seq
	default:
		lsn, err = s.bumpLSN(c.Request.Context(), ct.key)
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	s.itemSession(c, ct, group, lsn)
	setLSN(c, lsn)
	setCharge(c, res.charge())
	if op == "Delete" {
		c.Status(http.StatusNoContent)
		c.Writer.WriteHeaderNow()
		return
	}
	writeResource(c, res.status, res.etag, res.body, true)
}

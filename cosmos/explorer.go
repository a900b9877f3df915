package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// Query runs a query in Cosmos DB SQL over every item of the container
// whose core entity is named name ("db/container"), for the dashboard's
// data explorer: across all its partitions, with ORDER BY, aggregates and
// the rest computed in full, as for a cross-partition query of the SDKs.
// It returns at most max rows (100 when max is not positive), each as
// JSON. Expired items are never seen (CO-6). An unknown container is
// ENOTFOUND; a query the service refuses (a syntax error) is EINVALID with
// the service's message.
func (s *Server) Query(ctx context.Context, name, text string, max int) ([]json.RawMessage, error) {
	if max <= 0 {
		max = defaultPageSize
	}
	k := core.EntityKey{Protocol: core.Cosmos, Name: name}
	r, err := s.lookup(k, kindContainer)
	if isNotFound(err) {
		return nil, core.Errorf(core.ENOTFOUND, "container %q not found", name)
	}
	if err != nil {
		return nil, err
	}
	q, err := query.Parse(text)
	if err != nil {
		return nil, explorerError(err)
	}
	ct := &container{resource: r, key: k}
	docs, _, err := s.collect(ct, scope{all: true}, 0)
	if err != nil {
		return nil, explorerError(err)
	}
	rows := []json.RawMessage{}
	qr := &queryRequest{text: text, params: query.Params{}, q: q}
	err = s.run(qr, ct, docs, func(row []byte) bool {
		rows = append(rows, row)
		return len(rows) < max && ctx.Err() == nil
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, explorerError(err)
	}
	return rows, nil
}

// isNotFound reports whether err is the service's 404.
func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status == http.StatusNotFound
}

// explorerError turns the service's errors into lapse's: a query's errors
// and other 400s are EINVALID with the service's text.
func explorerError(err error) error {
	var qe *query.Error
	if errors.As(err, &qe) {
		return core.Errorf(core.EINVALID, "%s", qe.Message)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		switch ae.status {
		case http.StatusBadRequest:
			return core.Errorf(core.EINVALID, "%s", ae.msg)
		case http.StatusNotFound:
			return core.Errorf(core.ENOTFOUND, "%s", ae.msg)
		}
	}
	return err
}

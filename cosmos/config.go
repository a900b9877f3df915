package cosmos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/lapse-emulator/lapse/core"
	"github.com/lapse-emulator/lapse/cosmos/query"
)

// Config file (--cosmos-config): the databases and containers to have at
// start, in the shape of the resources the SDKs create, and the account's
// default consistency level (what the official emulator's
// /Consistency=Strong sets; Session when not given):
//
//	{"account": {"defaultConsistencyLevel": "Strong"},
//	 "databases": [{"id": "shop", "throughput": 400, "containers": [
//	    {"id": "carts", "partitionKey": {"paths": ["/userId"]}, "defaultTtl": 3600}
//	]}]}
//
// A container's properties are those of a container create (partitionKey
// may also be a single path, "/userId"); throughput and
// autoscaleMaxThroughput give a database or container its own offer.
// What exists already is left as it is.
type fileConfig struct {
	Account *struct {
		DefaultConsistencyLevel string `json:"defaultConsistencyLevel"`
	} `json:"account"`
	Databases []struct {
		ID           string            `json:"id"`
		Throughput   int               `json:"throughput"`
		AutoscaleMax int               `json:"autoscaleMaxThroughput"`
		Containers   []json.RawMessage `json:"containers"`
	} `json:"databases"`
}

// LoadConfig sets the account's settings of a config file and creates its
// databases and containers that do not exist yet, and waits until they are
// stored.
func (s *Server) LoadConfig(ctx context.Context, b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var fc fileConfig
	if err := dec.Decode(&fc); err != nil {
		return core.Errorf(core.EINVALID, "invalid Cosmos DB config: %v", err)
	}
	if a := fc.Account; a != nil && a.DefaultConsistencyLevel != "" {
		level, err := consistencyLevel(a.DefaultConsistencyLevel)
		if err != nil {
			return core.Errorf(core.EINVALID, "account: %s", core.ErrorMessage(err))
		}
		s.account.setConsistency(level)
	}
	for _, db := range fc.Databases {
		o := &query.Object{}
		o.Set("id", db.ID)
		if _, err := checkName(o); err != nil {
			return core.Errorf(core.EINVALID, "database %q: %v", db.ID, err)
		}
		offer, err := configOffer(db.Throughput, db.AutoscaleMax)
		if err != nil {
			return core.Errorf(core.EINVALID, "database %q: %v", db.ID, err)
		}
		if _, ok := s.cfg.Engine.Entity(dbKey(db.ID)); !ok {
			if _, err := s.newDatabase(ctx, o, offer); err != nil {
				return fmt.Errorf("database %q: %w", db.ID, err)
			}
		}
		parent, err := s.lookup(dbKey(db.ID), kindDatabase)
		if err != nil {
			return fmt.Errorf("database %q: %w", db.ID, err)
		}
		for _, raw := range db.Containers {
			if err := s.configContainer(ctx, parent, raw); err != nil {
				return fmt.Errorf("database %q: %w", db.ID, err)
			}
		}
	}
	return nil
}

// configOffer reads a config file's throughput settings.
func configOffer(throughput, autoscaleMax int) (*offerState, error) {
	switch {
	case autoscaleMax > 0:
		if autoscaleMax < 1000 || autoscaleMax%1000 != 0 {
			return nil, fmt.Errorf("autoscaleMaxThroughput %d: use a multiple of 1000, at least 1000", autoscaleMax)
		}
		return newOffer(autoscaleMax/10, autoscaleMax), nil
	case throughput > 0:
		if throughput < 400 || throughput%100 != 0 {
			return nil, fmt.Errorf("throughput %d: use a multiple of 100, at least 400", throughput)
		}
		return newOffer(throughput, 0), nil
	}
	return nil, nil
}

// configContainer creates one container of a config file, unless it exists.
func (s *Server) configContainer(ctx context.Context, db *resource, raw json.RawMessage) error {
	v, err := query.Decode(raw)
	o, ok := v.(*query.Object)
	if err != nil || !ok {
		return core.Errorf(core.EINVALID, "a container must be a JSON object")
	}
	id, _ := getString(o, "id")
	if pk, ok := o.Get("partitionKey"); ok {
		if path, ok := pk.(string); ok {
			def := &query.Object{}
			def.Set("paths", []any{path})
			def.Set("kind", "Hash")
			def.Set("version", float64(2))
			o.Set("partitionKey", def)
		}
	}
	var throughput, autoscaleMax int
	for _, k := range []string{"throughput", "autoscaleMaxThroughput"} {
		if n, ok := o.Get(k); ok {
			f, _ := n.(float64)
			if k == "throughput" {
				throughput = int(f)
			} else {
				autoscaleMax = int(f)
			}
			o.Delete(k)
		}
	}
	offer, err := configOffer(throughput, autoscaleMax)
	if err != nil {
		return core.Errorf(core.EINVALID, "container %q: %v", id, err)
	}
	if offer == nil && db.meta.Offer == nil {
		offer = newOffer(400, 0)
	}
	if _, ok := s.cfg.Engine.Entity(collKey(db.en.Name, id)); ok {
		return nil
	}
	_, en, err := s.containerEntity(db, o, offer)
	if err != nil {
		return fmt.Errorf("container %q: %w", id, err)
	}
	if _, err := s.cfg.Engine.CreateDurable(ctx, s.now(), en); err != nil {
		return fmt.Errorf("container %q: %w", id, err)
	}
	return nil
}

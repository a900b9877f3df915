package core

import "context"

// DiscardStore is a Store that keeps nothing: an engine on it lives in
// memory alone and comes back empty. The engine never reads its store but
// at Recover, so nothing is lost while it runs; a sandbox that is not
// durable (issue 29) runs on one, without a second copy of its items.
type DiscardStore struct{}

var _ Store = DiscardStore{}

// Load loads nothing.
func (DiscardStore) Load(context.Context, func(Entity) error, func(EntityKey, Item) error, func(EntityKey, SessionState) error) error {
	return nil
}

// Append keeps nothing; the Commit is already done.
func (DiscardStore) Append([]Op) *Commit { return committed(nil) }

// Close closes nothing: a store that keeps nothing holds nothing open.
func (DiscardStore) Close(context.Context) error { return nil }

-- Items get the group they belong to in their entity (core.Item.Group: a
-- Cosmos item's partition key), so that a restart rebuilds the groups.

ALTER TABLE items ADD COLUMN item_group TEXT NOT NULL DEFAULT '';

-- An item may be kept in the row of the item it replaced (core.Item.Row):
-- a replace of a keyed item (a Cosmos DB item written again) writes over
-- the old row, where it deleted that row and added one at the end of the
-- b-tree, which cost SQLite about twice as much. The row's id then holds
-- the Row, and seq the item's Seq; seq is NULL when the two are one (every
-- item before this version, and every item that replaced none).

ALTER TABLE items ADD COLUMN seq INTEGER;

-- Items in one b-tree. An item's rowid is its id: its entity's number
-- (entities.num, 1 to 2^20 - 1, unique among the stored entities) times
-- 2^43, plus its Seq (below 2^43, core.MaxSeq). A put or a delete then
-- touches one b-tree, where the rowid table of 0001 also kept an index of
-- its primary key (protocol, name, seq), and an entity's items are one
-- range of ids, in Seq order. Items of an entity that is not stored,
-- which no lapse wrote, are left out.
--
-- A Seq of 2^43 or more, which no lapse gave out, gets a text id that
-- INTEGER PRIMARY KEY refuses: the migration fails and the folder stays as
-- it was, rather than lose the item.

ALTER TABLE entities ADD COLUMN num INTEGER NOT NULL DEFAULT 0;

UPDATE entities SET num = (
	SELECT n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY protocol, name) AS n FROM entities)
	WHERE r = entities.rowid);

CREATE UNIQUE INDEX entities_num ON entities (num);

CREATE TABLE items_by_id (
	id               INTEGER PRIMARY KEY,
	key              TEXT    NOT NULL,
	body             BLOB,
	meta             BLOB,
	state            INTEGER NOT NULL,
	enqueued_at      INTEGER,
	modified_at      INTEGER,
	scheduled_at     INTEGER,
	ttl_ns           INTEGER,
	effective_ttl_ns INTEGER,
	due_at           INTEGER,
	rule             TEXT    NOT NULL,
	reason           TEXT    NOT NULL,
	locked_until     INTEGER,
	delivery_count   INTEGER NOT NULL,
	persistent       INTEGER NOT NULL,
	item_group       TEXT    NOT NULL
);

INSERT INTO items_by_id (id, key, body, meta, state, enqueued_at, modified_at, scheduled_at,
		ttl_ns, effective_ttl_ns, due_at, rule, reason, locked_until, delivery_count, persistent, item_group)
	SELECT CASE WHEN i.seq < 8796093022208 THEN e.num * 8796093022208 + i.seq ELSE 'Seq 2^43 or more' END, i.key, i.body, i.meta, i.state, i.enqueued_at, i.modified_at,
		i.scheduled_at, i.ttl_ns, i.effective_ttl_ns, i.due_at, i.rule, i.reason, i.locked_until,
		i.delivery_count, i.persistent, i.item_group
	FROM items i JOIN entities e ON e.protocol = i.protocol AND e.name = i.name;

DROP TABLE items;

ALTER TABLE items_by_id RENAME TO items;

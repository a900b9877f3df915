-- The first schema: entities and their items.
--
-- Times are INTEGER Unix milliseconds UTC, NULL for the zero time. TTLs are
-- INTEGER nanoseconds (what core.TTL holds), NULL when unset and -1 for
-- Forever. Seqs are INTEGER (core keeps them below 2^63).

CREATE TABLE entities (
	protocol          TEXT    NOT NULL,
	name              TEXT    NOT NULL,
	kind              TEXT    NOT NULL,
	parent            TEXT    NOT NULL,
	dead_letter_queue TEXT    NOT NULL,
	durable           INTEGER NOT NULL,
	policy            TEXT    NOT NULL, -- core.Policy as JSON
	settings          TEXT    NOT NULL, -- []core.Setting as JSON
	meta              BLOB,
	created           INTEGER,
	last_seq          INTEGER NOT NULL, -- at least the highest seq ever put
	PRIMARY KEY (protocol, name)
);

-- A rowid table, not WITHOUT ROWID: bodies can be large.
CREATE TABLE items (
	protocol         TEXT    NOT NULL,
	name             TEXT    NOT NULL,
	seq              INTEGER NOT NULL,
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
	PRIMARY KEY (protocol, name, seq)
);

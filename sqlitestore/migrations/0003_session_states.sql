-- Session states (core.SessionState, Service Bus session state, SS-4): one
-- row per session of an entity that keeps a state; an empty state is a row
-- with an empty blob. A rowid table: a state can be as large as a message.

CREATE TABLE session_states (
	protocol      TEXT NOT NULL,
	name          TEXT NOT NULL,
	session_group TEXT NOT NULL,
	state         BLOB NOT NULL,
	PRIMARY KEY (protocol, name, session_group)
);

-- PersistentLiveData schema version 3.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- A key removed by PersistentStore.removeKey (or pld-tool delete) loses every row of pld_values and
-- leaves one row here: the version its removal took, one above its last stored version. Version numbers
-- are never reused: the next write of the key continues above it — in every process, after a restart —
-- and a live value of the key moves to its default at that version.
CREATE TABLE pld_removed_keys (
  key        TEXT    NOT NULL PRIMARY KEY,
  version    INTEGER NOT NULL CHECK (version >= 1),
  removed_at INTEGER NOT NULL             -- milliseconds since 1970-01-01T00:00:00Z
) WITHOUT ROWID;

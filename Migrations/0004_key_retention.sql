-- PersistentLiveData schema version 4.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- A key's own retention, recorded by PersistentStore.liveData(_:default:retention:). It overrides the
-- retention option of every process that writes or prunes the key (pld-tool prune included): a
-- heartbeat key keeping its last 100 versions and a key keeping all of them live in one file.
-- keep: the number of newest versions kept, or NULL for every version. A key without a row here
-- follows the retention option of the process that writes it.
CREATE TABLE pld_key_retention (
  key  TEXT    NOT NULL PRIMARY KEY,
  keep INTEGER CHECK (keep IS NULL OR keep >= 1)
) WITHOUT ROWID;

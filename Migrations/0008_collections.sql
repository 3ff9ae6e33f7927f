-- PersistentLiveData schema version 8.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- Collections (PersistentStore.collection): a member is an ordinary key NAME/ID. A collection's name is
-- recorded here the first time a writable store opens it; from then on every change of a member — by
-- this library, pld-tool or any other writer, in any process — is logged in pld_collection_log.
CREATE TABLE pld_collections (
  name       TEXT    NOT NULL PRIMARY KEY,
  created_at INTEGER NOT NULL             -- milliseconds since 1970-01-01T00:00:00Z
) WITHOUT ROWID;

-- One row per committed change of a member of a recorded collection: a version written (removed = 0),
-- or a removal (removed = 1; version is the version the removal took). seq is max(seq) + 1 at the insert,
-- taken under SQLite's write lock, so it grows in commit order; rows are deleted only by the library's
-- trim, which deletes the rows of versions no longer stored (pruned by retention, or taken by a removal)
-- and never the newest row, so no number is ever handed out twice. A checkpoint
-- (PersistentCollection.changes(since:)) is a seq: every change committed after it has a larger one.
CREATE TABLE pld_collection_log (
  seq     INTEGER PRIMARY KEY,
  key     TEXT    NOT NULL,
  version INTEGER NOT NULL,
  removed INTEGER NOT NULL DEFAULT 0
);

-- A key is a member of collection NAME when it is longer than NAME/ and starts with it: under the BINARY
-- collation (byte order) exactly the keys above NAME || '/' and below NAME || '0' ('0' follows '/').
-- Writes of keys outside every collection pay one look at pld_collections, which is empty or small.
CREATE TRIGGER pld_collection_log_on_value AFTER INSERT ON pld_values
WHEN EXISTS (SELECT 1 FROM pld_collections WHERE NEW.key > name || '/' AND NEW.key < name || '0')
BEGIN
  INSERT INTO pld_collection_log (key, version) VALUES (NEW.key, NEW.version);
END;

CREATE TRIGGER pld_collection_log_on_removal AFTER INSERT ON pld_removed_keys
WHEN EXISTS (SELECT 1 FROM pld_collections WHERE NEW.key > name || '/' AND NEW.key < name || '0')
BEGIN
  INSERT INTO pld_collection_log (key, version, removed) VALUES (NEW.key, NEW.version, 1);
END;

CREATE TRIGGER pld_collection_log_on_removal_again AFTER UPDATE OF version ON pld_removed_keys
WHEN EXISTS (SELECT 1 FROM pld_collections WHERE NEW.key > name || '/' AND NEW.key < name || '0')
BEGIN
  INSERT INTO pld_collection_log (key, version, removed) VALUES (NEW.key, NEW.version, 1);
END;

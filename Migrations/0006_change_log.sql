-- PersistentLiveData schema version 6.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- The change log: one row per committed change of a key (a version written, a removal recorded) that an
-- open store of another process may need, in commit order, so that such a store learns which keys
-- changed since it last looked without reading every key it holds. seq is max(seq) + 1 at the insert,
-- taken under SQLite's write lock: it grows in commit order, a rolled-back transaction takes none, and
-- since the log is only ever trimmed from its oldest end (the newest row is always kept), a number is
-- never reused. Written by triggers, so that every writer — this library, pld-tool, the sqlite3 shell —
-- is in it.
CREATE TABLE pld_change_log (
  seq INTEGER PRIMARY KEY,
  key TEXT    NOT NULL
);

-- The open stores that follow the log: a store that watches for other processes' commits adds a row
-- when it opens and deletes it when it closes (a row whose process is gone is deleted by the next store
-- that opens). Its id is random, and the store sets it as its connection's last_insert_rowid(): a
-- change is logged only while a reader other than its writer is open, so a file one process uses
-- alone pays nothing for the log.
CREATE TABLE pld_change_log_readers (
  id         INTEGER PRIMARY KEY,
  pid        INTEGER NOT NULL,
  started_at INTEGER NOT NULL             -- milliseconds since 1970-01-01T00:00:00Z
);

CREATE TRIGGER pld_change_log_on_value AFTER INSERT ON pld_values
WHEN EXISTS (SELECT 1 FROM pld_change_log_readers WHERE id <> last_insert_rowid())
BEGIN
  INSERT INTO pld_change_log (key) VALUES (NEW.key);
END;

CREATE TRIGGER pld_change_log_on_removal AFTER INSERT ON pld_removed_keys
WHEN EXISTS (SELECT 1 FROM pld_change_log_readers WHERE id <> last_insert_rowid())
BEGIN
  INSERT INTO pld_change_log (key) VALUES (NEW.key);
END;

CREATE TRIGGER pld_change_log_on_removal_again AFTER UPDATE ON pld_removed_keys
WHEN EXISTS (SELECT 1 FROM pld_change_log_readers WHERE id <> last_insert_rowid())
BEGIN
  INSERT INTO pld_change_log (key) VALUES (NEW.key);
END;

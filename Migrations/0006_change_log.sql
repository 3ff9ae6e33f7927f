-- PersistentLiveData schema version 6.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- The change log: one row per committed change of a key (a version written, a removal recorded), in
-- commit order, so that another connection learns which keys changed since it last looked without
-- reading every key it holds. seq is max(seq) + 1 at the insert, taken under SQLite's write lock: it
-- grows in commit order, a rolled-back transaction takes none, and since the log is only ever trimmed
-- from its oldest end (the newest row is always kept), a number is never reused. Written by triggers,
-- so that every writer — this library, pld-tool, the sqlite3 shell — is in it.
CREATE TABLE pld_change_log (
  seq INTEGER PRIMARY KEY,
  key TEXT    NOT NULL
);

CREATE TRIGGER pld_change_log_on_value AFTER INSERT ON pld_values
BEGIN
  INSERT INTO pld_change_log (key) VALUES (NEW.key);
END;

CREATE TRIGGER pld_change_log_on_removal AFTER INSERT ON pld_removed_keys
BEGIN
  INSERT INTO pld_change_log (key) VALUES (NEW.key);
END;

CREATE TRIGGER pld_change_log_on_removal_again AFTER UPDATE ON pld_removed_keys
BEGIN
  INSERT INTO pld_change_log (key) VALUES (NEW.key);
END;

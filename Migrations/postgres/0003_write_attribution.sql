-- PersistentLiveDataPostgres, schema version 3: who wrote each version, and why (WriteAttribution).
--
-- The author (at most 256 bytes of UTF-8) and the reason (at most 4,096) in effect where the write was
-- called, NULL when none was. The row carries them, so every replica reads them with the value: through
-- its catch-up, a notified read, history and changes(since:). Rows written before this migration read
-- NULL.
ALTER TABLE pld_values ADD COLUMN author text;
ALTER TABLE pld_values ADD COLUMN reason text;

-- PersistentLiveData shared-store schema version 5.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- What a replica of a release that does not know a migration may do with this database (API §20),
-- recorded with each migration when it is applied: 'read-write' (it keeps reading and writing: an added
-- table, column or index), 'read-only' (it reads; each write throws, naming the migration) or
-- 'incompatible' (it refuses the database; stop every replica of the older release first). A replica
-- meeting migrations past what it knows runs by the worst of their marks, so that a rollback or a
-- scale-out of the older release during a rollout never crash-loops on an additive change. Every later
-- migration records its own mark; the ones before this one are marked here: the initial schema has
-- nothing before it, the others only added (an older replica does not see a removal, 0004, and keeps the
-- value it had; its writes number on from the key's head).
ALTER TABLE pld_schema ADD COLUMN compatibility text NOT NULL DEFAULT 'read-write'
  CHECK (compatibility IN ('read-write', 'read-only', 'incompatible'));

UPDATE pld_schema SET compatibility = 'incompatible' WHERE version = 1;

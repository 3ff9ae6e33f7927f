-- PersistentLiveData schema version 5.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- Properties of the store file itself, one row each. 'application': the application the file belongs
-- to (StoreOptions.applicationIdentifier), recorded when a store with that option creates the file or
-- first opens it, and checked at every open: another application's store is refused, not used.
CREATE TABLE pld_store_properties (
  name  TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

import Testing

/// Parent of the suites for the SQLite store's `SQLite/` folder (connection, statements, transactions,
/// file header), so that `swift test --filter StorageTests` selects them all.
@Suite enum StorageTests {}

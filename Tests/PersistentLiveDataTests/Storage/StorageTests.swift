import Testing

/// Parent of the suites for `Storage/` (connection, statements, transactions, file header), so that
/// `swift test --filter Storage` selects them all.
@Suite enum StorageTests {}

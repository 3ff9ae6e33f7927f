extension PersistentStore {
  /// Reads every page of the store file and throws if any is damaged (SQLite's `PRAGMA quick_check`).
  ///
  /// Opening a store checks what open reads — the file's header and size, its schema and its application —
  /// whatever the number of keys; a page damaged anywhere else is reported as
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` by the operation that reads
  /// it. This call checks the whole file now, at a time of the app's choosing
  /// (``StoreOptions/verifiesIntegrityOnOpen`` does it before the store is returned). It costs about 0.1 s
  /// per 50 MB of file and reads from a connection of its own, so the store's reads and writes go on
  /// meanwhile; run it off the main actor:
  ///
  /// ```swift
  /// Task.detached {
  ///   do { try store.verifyIntegrity() } catch { report(error) }   // then restore a backup
  /// }
  /// ```
  ///
  /// - Throws: ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` with SQLite's
  ///   first finding, ``/PersistentLiveDataBackend/PersistentLiveDataError/storeClosed(path:)``, or the
  ///   storage error that kept a page from being read (an I/O error says nothing about the content).
  public func verifyIntegrity() throws {
    try database.verifyIntegrity()
  }
}

/// Reads the versions of one key in order, a page at a time, waiting for the store's next commit when it
/// has delivered them all.
///
/// Backend-neutral: a backend gives it a way to read the rows of the key after a version (nil once the
/// store is closed) and the ``ChangeSignal`` it raises for every commit it learns of.
///
/// ```swift
/// let reader = ChangeReader(decoding: decoding, after: since, signal: database.changeSignal) { after, limit in
///   try database.rows(key: key, after: after, limit: limit)
/// }
/// let stream = AsyncThrowingStream(unfolding: { try await reader.next() })
/// ```
package actor ChangeReader<Value: Codable & Sendable> {
  /// Reads at most `limit` rows after a version, oldest first; nil when the store is closed.
  package typealias ReadRows = @Sendable (_ after: Int64, _ limit: Int) async throws -> [StoredRow]?
  /// Reads the newest version the store holds of the key (its removal's included; 0: none).
  package typealias ReadNewestVersion = @Sendable () async throws -> Int64

  private let readRows: ReadRows
  private let signal: ChangeSignal
  private let decoding: StoredValueDecoding<Value>
  private var cursor: VersionCursor
  private var page: ArraySlice<StoredRow> = []
  /// Checked once, before the first read: nil once checked.
  private var newestVersion: ReadNewestVersion?

  /// How many rows one read of the store returns at most.
  package static var pageSize: Int { 256 }

  /// - Parameters:
  ///   - version: The last version already handled; 0 (or less) starts at the oldest version kept.
  ///   - newestVersion: Checks, before the first read, that `version` is not newer than the store's
  ///     newest version of the key (it throws ``PersistentLiveDataError/unknownVersion(key:version:)``
  ///     then); nil: no check.
  package init(
    decoding: StoredValueDecoding<Value>, after version: Int64, signal: ChangeSignal,
    newestVersion: ReadNewestVersion? = nil, readRows: @escaping ReadRows
  ) {
    self.decoding = decoding
    self.signal = signal
    self.readRows = readRows
    self.newestVersion = version > 0 ? newestVersion : nil
    cursor = VersionCursor(key: decoding.key, after: version, fromOldestKept: true)
  }

  /// The next version; nil once the store is closed or the consuming task is cancelled.
  package func next() async throws -> Versioned<Value>? {
    if let readNewest = newestVersion {
      newestVersion = nil
      let newest: Int64
      do {
        newest = try await readNewest()
      } catch PersistentLiveDataError.storeClosed {
        return nil
      }
      guard newest >= cursor.position else {
        throw PersistentLiveDataError.unknownVersion(key: cursor.key, version: cursor.position)
      }
    }
    while true {
      if let row = page.popFirst() {
        try cursor.advance(over: row)
        return Versioned(
          version: row.version, value: try decoding.decode(row), writtenAt: row.writtenAt,
          attribution: row.attribution)
      }
      if Task.isCancelled { return nil }
      // Noted before reading: a commit between the read and the wait ends the wait at once.
      let generation = signal.generation
      guard let rows = try await readRows(cursor.position, Self.pageSize) else { return nil }
      page = rows[...]
      if page.isEmpty {
        guard await signal.wait(after: generation) else { return nil }
      }
    }
  }
}

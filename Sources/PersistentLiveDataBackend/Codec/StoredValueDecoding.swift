package import Foundation
package import Logging

/// How a live value turns stored rows into values under the store's ``DecodeFailurePolicy``.
///
/// The other half of the seam between observation and storage: every backend restores, reloads and
/// receives rows through these three rules, so a value that no longer decodes is handled the same way
/// whatever stores it. None of them deletes or rewrites a row. Decoding runs user code (`init(from:)`):
/// call these with no store lock held.
///
/// Every read path decodes through ``decode(_:)``: a row of the type's current schema version is decoded
/// as before, an older one is upgraded by ``PersistentValue/init(from:storedSchemaVersion:)``, a newer
/// one is ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)``.
///
/// ```swift
/// let decoding = StoredValueDecoding<Settings>(key: "settings", policy: .lastDecodable, logger: nil)
/// let (value, version) = try decoding.restore(latest: row, default: Settings()) {
///   try database.history(key: "settings", limit: nil)
/// }
/// ```
package struct StoredValueDecoding<Value: Codable & Sendable>: Sendable {
  package let key: String
  package let policy: DecodeFailurePolicy
  package let logger: Logger?
  /// Where decode failures are reported to the app (``StoreEvent``), besides the logger.
  package let events: StoreEventHub?
  /// The schema version `Value` writes and how it reads older ones, decided once.
  let schema: ValueSchema<Value>
  /// The newest version written elsewhere that ``received(_:)`` found undecodable and reported (0:
  /// none): each such version is logged and reported once, however many later checks meet it again.
  private let reportedUndecodable = Locked<Int64>(0)

  /// Where decode failures and versions received from elsewhere are counted (swift-metrics).
  package let instrumentation: StoreInstrumentation?

  package init(
    key: String, policy: DecodeFailurePolicy, logger: Logger?, events: StoreEventHub? = nil,
    instrumentation: StoreInstrumentation? = nil
  ) {
    self.instrumentation = instrumentation
    self.key = key
    self.policy = policy
    self.logger = logger
    self.events = events
    schema = ValueSchema()
  }

  /// The newest schema version this type reads: ``PersistentValue/schemaVersion``, or 1.
  package var schemaVersion: Int { schema.current }

  /// The schema version this type writes: ``PersistentValue/writtenSchemaVersion`` (at most
  /// ``schemaVersion``), or 1. Every write of the type records it, with a payload from ``encode(_:key:)``.
  package var writtenSchemaVersion: Int { schema.written }

  /// `value` encoded in the form of ``writtenSchemaVersion``: `encode(to:)` for the current form,
  /// ``PersistentValue/encode(to:schemaVersion:)`` for an older one.
  ///
  /// ```swift
  /// let payload = try decoding.encode(value, key: key)   // recorded with decoding.writtenSchemaVersion
  /// ```
  /// - Throws: ``PersistentLiveDataError/encodingFailed(key:reason:)`` or
  ///   ``PersistentLiveDataError/valueTooDeep(key:depth:)``.
  package func encode(_ value: Value, key: String) throws -> Data {
    try schema.encode(value, key: key)
  }

  /// Decodes `row`, upgrading it in memory when it was stored with an older schema version.
  ///
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)``, or
  ///   ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)`` for a row written by
  ///   a newer schema than `Value` knows.
  package func decode(_ row: StoredRow) throws -> Value {
    // The row's own key names it: a collection decodes the rows of all its members with one decoding.
    let key = row.key
    if row.schemaVersion == schema.current {
      return try ValueCodec.decode(
        Value.self, from: row.payload, key: key, version: row.version, schemaVersion: row.schemaVersion)
    }
    if row.schemaVersion > schema.current {
      throw PersistentLiveDataError.valueSchemaTooNew(
        key: key, version: row.version, stored: row.schemaVersion, supported: schema.current)
    }
    do {
      return try schema.decode(row.payload, storedSchemaVersion: row.schemaVersion)
    } catch {
      throw ValueCodec.undecodable(
        error, key: key, version: row.version, stored: row.schemaVersion, current: schema.current,
        payload: row.payload)
    }
  }

  /// `row`'s value, or nil when it does not decode: reported (an event and a warning) under every
  /// policy, for a collection's member written elsewhere. A member that does not decode keeps its last
  /// value; the caller reports each version once.
  func memberValue(_ row: StoredRow) -> Value? {
    do {
      let value = try decode(row)
      instrumentation?.received(writtenAtMilliseconds: row.writtenAtMilliseconds)
      return value
    } catch {
      logger?.warning(
        "A member's version written elsewhere does not decode; the collection keeps its last value",
        metadata: [
          "key": "\(EscapedText.quotedForMessage(row.key))", "version": "\(row.version)", "error": "\(error)",
        ])
      let failure =
        error as? PersistentLiveDataError
        ?? .undecodable(key: row.key, version: row.version, reason: String(describing: error))
      report(.undecodableVersion(key: row.key, version: row.version, error: failure))
      return nil
    }
  }

  /// The value and version a new live instance starts from: the latest row, or under the policy the
  /// default or the newest older row that decodes — always at the latest version, so the next write
  /// continues above it.
  ///
  /// - Parameters:
  ///   - latest: The newest stored row; nil when the key was never written (version 0, the default).
  ///   - defaultValue: The default of the key.
  ///   - history: The kept rows, newest first; read only for ``DecodeFailurePolicy/lastDecodable``.
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)`` under
  ///   ``DecodeFailurePolicy/throwError``, or what `history` throws.
  package func restore(
    latest: StoredRow?, default defaultValue: Value, history: () throws -> [StoredRow]
  ) throws -> (value: Value, version: Int64) {
    guard let latest else { return (defaultValue, 0) }
    return (try restoreMember(latest: latest, history: history) ?? defaultValue, latest.version)
  }

  /// The value `latest` restores to under the policy: its own, or under
  /// ``DecodeFailurePolicy/lastDecodable`` the newest older row that decodes; nil when the policy falls
  /// back to the default (a collection then leaves the member out). Every fallback is reported.
  ///
  /// - Throws: The decoding error under ``DecodeFailurePolicy/throwError``, or what `history` throws.
  package func restoreMember(latest: StoredRow, history: () throws -> [StoredRow]) throws -> Value? {
    do {
      return try decode(latest)
    } catch {
      let key = latest.key
      let metadata: Logger.Metadata = [
        "key": "\(EscapedText.quotedForMessage(key))", "version": "\(latest.version)", "error": "\(error)",
      ]
      switch policy {
      case .throwError:
        instrumentation?.countUndecodable()
        logger?.warning("Stored value does not decode", metadata: metadata)
        throw error
      case .useDefault:
        logger?.warning("Stored value does not decode; starting from the default", metadata: metadata)
        report(
          .restoredPastUndecodable(key: key, version: latest.version, startedFrom: nil, error: failure(error))
        )
        return nil
      case .lastDecodable:
        for older in try history() where older.version < latest.version {
          if let value = try? decode(older) {
            logger?.warning(
              "Stored value does not decode; starting from version \(older.version)", metadata: metadata)
            report(
              .restoredPastUndecodable(
                key: key, version: latest.version, startedFrom: older.version, error: failure(error)))
            return value
          }
        }
        logger?.warning("No stored version decodes; starting from the default", metadata: metadata)
        report(
          .restoredPastUndecodable(key: key, version: latest.version, startedFrom: nil, error: failure(error))
        )
        return nil
      }
    }
  }

  /// The value to continue from after an optimistic write lost to `row` (written elsewhere): `row`'s
  /// value, or under a lenient policy the value in memory, now at `row`'s version.
  ///
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)`` under
  ///   ``DecodeFailurePolicy/throwError``.
  package func reload(_ row: StoredRow, current: Value) throws -> Value {
    switch policy {
    case .throwError: try decode(row)
    case .useDefault, .lastDecodable: (try? decode(row)) ?? current
    }
  }

  /// `row`'s value if it decodes; nil (logged) otherwise. For versions written elsewhere: one this type
  /// cannot read stays on disk untouched and the live value keeps its last version (under
  /// ``DecodeFailurePolicy/throwError`` the next `update` reports it).
  ///
  /// A backend hands the newest row of a key again after every commit made elsewhere, while memory is
  /// behind it: a version already found undecodable is not decoded, logged or reported again (one
  /// warning and one ``StoreEvent/undecodableVersion(key:version:error:)`` per version); a newer one is.
  package func received(_ row: StoredRow) -> Value? {
    guard reportedUndecodable.withLock({ $0 }) != row.version else { return nil }
    do {
      let value = try decode(row)
      instrumentation?.received(writtenAtMilliseconds: row.writtenAtMilliseconds)
      return value
    } catch {
      let isNew = reportedUndecodable.withLock { reported in
        guard row.version > reported else { return false }
        reported = row.version
        return true
      }
      guard isNew else { return nil }
      logger?.warning(
        "A version written elsewhere does not decode; the live value keeps its last version",
        metadata: [
          "key": "\(EscapedText.quotedForMessage(key))", "version": "\(row.version)", "error": "\(error)",
        ])
      report(.undecodableVersion(key: key, version: row.version, error: failure(error)))
      return nil
    }
  }

  /// `row`'s value for a history under the policy: the value when it decodes; under
  /// ``DecodeFailurePolicy/throwError`` the decoding error (naming key and version); under a lenient
  /// policy nil, the version then left out with a warning to the logger and a
  /// ``StoreEvent/versionLeftOutOfHistory(key:version:error:)`` — never silently.
  ///
  /// ```swift
  /// let values = try rows.compactMap { row in try decoding.historyValue(row).map { (row, $0) } }
  /// ```
  /// - Throws: ``PersistentLiveDataError/undecodable(key:version:reason:)`` or
  ///   ``PersistentLiveDataError/valueSchemaTooNew(key:version:stored:supported:)`` under
  ///   ``DecodeFailurePolicy/throwError``.
  func historyValue(_ row: StoredRow) throws -> Value? {
    do {
      return try decode(row)
    } catch {
      guard policy != .throwError else {
        instrumentation?.countUndecodable()
        logger?.warning(
          "history() meets a version that does not decode and throws",
          metadata: [
            "key": "\(EscapedText.quotedForMessage(key))", "version": "\(row.version)", "error": "\(error)",
          ])
        throw failure(error, version: row.version)
      }
      reportLeftOut(row, error: error, logger: logger)
      return nil
    }
  }

  /// Warns `logger` and reports `row`, left out of a history because it does not decode.
  private func reportLeftOut(_ row: StoredRow, error: any Error, logger: Logger?) {
    logger?.warning(
      "history() leaves out a version that does not decode",
      metadata: [
        "key": "\(EscapedText.quotedForMessage(key))", "version": "\(row.version)", "error": "\(error)",
      ])
    report(
      .versionLeftOutOfHistory(key: key, version: row.version, error: failure(error, version: row.version)))
  }

  /// Hands `event` to the store's event streams, if any.
  private func report(_ event: StoreEvent) {
    instrumentation?.countUndecodable()
    events?.emit(event)
  }

  /// `error` as the store reports it: ``decode(_:)`` throws only ``PersistentLiveDataError``s.
  private func failure(_ error: any Error, version: Int64 = 0) -> PersistentLiveDataError {
    error as? PersistentLiveDataError
      ?? .undecodable(key: key, version: version, reason: String(describing: error))
  }
}

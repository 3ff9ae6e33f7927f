internal import Logging

/// What a store does when one of its reads or writes meets a damaged page of its file.
///
/// Every connection checks the b-tree pages it reads (`PRAGMA cell_size_check`, set by ``SQLiteConnection``),
/// so damage surfaces as `SQLITE_CORRUPT` from the statement that meets it. The store then throws
/// ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` whose detail names what was
/// being read — the key, and the version where known — and the SQLite code; it reports the same error as a
/// ``/PersistentLiveDataBackend/StoreEvent/damagedPage(path:key:version:error:)`` and logs it. Nothing is
/// written over the damage, nothing is reset, and the rest of the file stays readable.
extension StoreDatabase {
  /// Where a read or write met a damaged page: the key and version it was at, and what it was doing.
  ///
  /// ```swift
  /// try withConnection(DamageSite(key: key, version: version, activity: "reading version \(version)")) { … }
  /// ```
  struct DamageSite {
    /// The key being read or written.
    let key: String
    /// The version being read where known: the one asked for, or the last one read before the damage.
    let version: Int64?
    /// What the store was doing, for the error's detail: "reading version 3 of key \"a\"".
    let activity: String

    /// Reading `key`'s newest row, for a new live value.
    static func latest(of key: String) -> DamageSite {
      DamageSite(key: key, version: nil, activity: "reading key \(EscapedText.quotedForMessage(key))")
    }

    /// Reading version `version` of `key`.
    static func version(_ version: Int64, of key: String) -> DamageSite {
      DamageSite(
        key: key, version: version,
        activity: "reading version \(version) of key \(EscapedText.quotedForMessage(key))")
    }

    /// Reading `key`'s versions newest first, `lastRead` the last one read (nil: none yet).
    static func history(of key: String, lastRead: Int64?) -> DamageSite {
      let quoted = EscapedText.quotedForMessage(key)
      guard let lastRead else {
        return DamageSite(key: key, version: nil, activity: "reading the history of key \(quoted)")
      }
      return DamageSite(
        key: key, version: lastRead,
        activity: "reading the history of key \(quoted) past version \(lastRead), the last one read")
    }

    /// Reading `key`'s versions after `version`, oldest first, `lastRead` the last one read.
    static func changes(of key: String, after version: Int64, lastRead: Int64?) -> DamageSite {
      let quoted = EscapedText.quotedForMessage(key)
      let position = lastRead.map { "past version \($0), the last one read" } ?? "after version \(version)"
      return DamageSite(
        key: key, version: lastRead ?? version, activity: "reading the versions of key \(quoted) \(position)")
    }

    /// Writing a new version of `key`.
    static func writing(_ key: String) -> DamageSite {
      DamageSite(key: key, version: nil, activity: "writing key \(EscapedText.quotedForMessage(key))")
    }
  }

  /// `error` as the store reports it: a
  /// ``/PersistentLiveDataBackend/PersistentLiveDataError/corrupt(path:detail:)`` gets `site`'s activity in
  /// its detail and is reported
  /// (``/PersistentLiveDataBackend/StoreEvent/damagedPage(path:key:version:error:)``, the logger); any other
  /// error is returned as it is.
  ///
  /// ```swift
  /// catch { throw reportingDamage(StoreErrors.map(error, path: displayPath), at: site) }
  /// ```
  func reportingDamage(_ error: any Error, at site: DamageSite?) -> any Error {
    guard case .corrupt(let path, let detail) = error as? PersistentLiveDataError else { return error }
    let named = site.map { PersistentLiveDataError.corrupt(path: path, detail: "\($0.activity): \(detail)") }
    let reported = named ?? .corrupt(path: path, detail: detail)
    options.logger?.error(
      "The store's file has a damaged page; nothing was written over it",
      metadata: [
        "path": "\(path)", "key": "\(site.map { EscapedText.quotedForMessage($0.key) } ?? "")",
        "version": "\(site?.version.map(String.init) ?? "")", "error": "\(reported)",
      ])
    events.emit(.damagedPage(path: path, key: site?.key, version: site?.version, error: reported))
    return reported
  }
}

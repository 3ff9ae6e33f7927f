import PersistentLiveData

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a store the way each kind of command needs it.
enum StoreAccess {
  /// A read-only inspector: never creates, migrates or writes the file.
  ///
  /// An empty (0-byte) file is refused: SQLite (and the library's inspector) would read it as an empty
  /// database, but nothing ever stored anything in it, and a command that says "ok" or "0 keys" about
  /// it hides a wrong path or a lost file. Only `set --create` and `import --create` make it a store.
  ///
  /// - Parameter salvaging: Open a truncated file as well, to read what is left of it (`verify` and the
  ///   `--salvage` reads); other commands refuse it.
  /// - Throws: ``CommandError/emptyFile(path:suggestingCreate:)``, or ``InspectionError`` or
  ///   ``PersistentLiveDataError`` naming the file.
  static func inspector(_ path: String, salvaging: Bool = false) throws -> StoreInspector {
    if isEmptyFile(path) { throw CommandError.emptyFile(path: path, suggestingCreate: false) }
    return try StoreInspector(path: path, salvaging: salvaging)
  }

  /// Whether `path` is an empty (0-byte) regular file; what else is there is left to the inspector's
  /// or the store's own check, and its message.
  static func isEmptyFile(_ path: String) -> Bool {
    (try? StoreFileValidator.checkFile(at: path, access: .readOnly)) == .empty
  }

  /// What a write command does when nothing is at the database path.
  enum MissingFile {
    /// Create a new, empty store, and the folders leading to it (`set --create`, `import --create`).
    case create
    /// Fail with ``InspectionError/missingFile(path:)``, as read commands do (`rollback`, `prune`, which
    /// need stored versions).
    case fail
    /// Fail with a ``CommandError`` that names the path and `--create` (`set`, `import` without it).
    case failSuggestingCreate
  }

  /// A store for writing, through the library's own write path.
  ///
  /// Without ``MissingFile/create``, a missing file is refused before the library opens anything, so
  /// that a mistyped path creates no file and no folder; so is an empty (0-byte) file, which is left as
  /// it is. With it, an empty file becomes the store, made 0600 first (``makePrivate(emptyFile:)``) as
  /// a file the library creates.
  ///
  /// - Parameters:
  ///   - path: The database file.
  ///   - missing: What to do when no file is at `path`.
  /// - Throws: ``CommandError`` or ``InspectionError/missingFile(path:)`` for a missing file (see
  ///   ``MissingFile``), or a ``PersistentLiveDataError`` naming the file (`notADatabase`,
  ///   `isADirectory`, `foreignDatabase`, `schemaTooNew`, `readOnly`, `busy`, …).
  static func store(_ path: String, ifMissing missing: MissingFile) throws -> PersistentStore {
    try checkPresence(path, ifMissing: missing)
    if missing == .create, isEmptyFile(path) { try makePrivate(emptyFile: path) }
    // The store checks the file again, with the same validator, when it opens it.
    return try PersistentStore(path: path)
  }

  /// Gives the empty file at `path`, about to become a store through `--create`, the mode of a store
  /// pld-tool creates (0600), before SQLite writes to it and gives its mode to the -wal and -shm files.
  ///
  /// The library itself leaves the mode of an existing file as its owner made it; a file made by
  /// `touch` (0644 or 0666) is not a mode anyone chose for a store. The file is opened without following
  /// a link, and changed only while it is still an empty regular file.
  static func makePrivate(emptyFile path: String) throws {
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    var failure: (call: String, code: Int32)?
    if descriptor < 0 {
      failure = ("open", errno)
    } else {
      defer { close(descriptor) }
      var info = stat()
      if fstat(descriptor, &info) != 0 {
        failure = ("fstat", errno)
      } else if info.st_mode & S_IFMT == S_IFREG, info.st_size == 0, info.st_mode & 0o7777 != 0o600,
        fchmod(descriptor, 0o600) != 0
      {
        failure = ("fchmod", errno)
      }
    }
    guard let failure else { return }
    throw CommandError(
      "\(TerminalText.quoted(path)) is an empty file that cannot be made private (mode 0600) to become a "
        + "store: \(failure.call): \(String(cString: strerror(failure.code))).")
  }

  /// Throws what ``store(_:ifMissing:)`` throws for a missing file, without opening anything: a write
  /// command calls it before it reads its input, so that a mistyped path fails first.
  static func checkPresence(_ path: String, ifMissing missing: MissingFile) throws {
    guard missing != .create else { return }
    switch try StoreFileValidator.checkFile(at: path, access: .readWrite) {
    case .missing where missing == .failSuggestingCreate: throw CommandError.noStore(path: path)
    case .missing: throw InspectionError.missingFile(path: path)
    case .empty:
      throw CommandError.emptyFile(path: path, suggestingCreate: missing == .failSuggestingCreate)
    default: return
    }
  }
}

extension Console {
  /// Writes `value` as one pretty-printed JSON document and a newline.
  func writeJSON(_ value: JSONValue) {
    writeLine(value.pretty)
  }
}

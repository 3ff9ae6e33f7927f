/// The fields of the 100-byte header at the start of every SQLite database file.
///
/// Parsed in pure Swift (no SQLite) from the layout documented at https://www.sqlite.org/fileformat.html
/// ("1.3. The Database Header"). All multibyte fields are big-endian.
///
/// ```swift
/// if case .sqlite(let header) = try DatabaseFile.classify(path: path), header.isWAL { … }
/// ```
package struct DatabaseFileHeader: Sendable, Hashable {
  /// The header's length in bytes.
  package static let length = 100
  /// "The header string: "SQLite format 3\000"" (offset 0, 16 bytes).
  static let magic: [UInt8] = Array("SQLite format 3".utf8) + [0]

  /// The page size in bytes, 512…65536 (offset 16; "the value 1 representing a page size of 65536").
  package let pageSize: Int
  /// File format write version (offset 18): 1 legacy/rollback journal, 2 WAL.
  let writeVersion: UInt8
  /// File format read version (offset 19): 1 legacy/rollback journal, 2 WAL.
  let readVersion: UInt8
  /// File change counter (offset 24).
  let fileChangeCounter: UInt32
  /// Size of the database in pages (offset 28), only meaningful when ``isInHeaderSizeValid``.
  let databaseSizeInPages: UInt32
  /// Schema cookie (offset 40), incremented by every schema change.
  let schemaCookie: UInt32
  /// Text encoding (offset 56): 1 UTF-8, 2 UTF-16le, 3 UTF-16be (0 in a file without a schema yet).
  let textEncoding: UInt32
  /// `PRAGMA user_version` (offset 60).
  let userVersion: Int32
  /// `PRAGMA application_id` (offset 68).
  let applicationID: Int32
  /// The version-valid-for number (offset 92): the change counter when ``sqliteVersionNumber`` was stored.
  let versionValidFor: UInt32
  /// `SQLITE_VERSION_NUMBER` of the library that last wrote the file (offset 96), e.g. 3040001.
  let sqliteVersionNumber: UInt32

  /// Whether the file is in WAL mode (write and read versions are 2).
  var isWAL: Bool { writeVersion == 2 && readVersion == 2 }

  /// Whether ``databaseSizeInPages`` can be trusted.
  ///
  /// SQLite: "The in-header database size is only considered to be valid if it is nonzero and if the
  /// 4-byte change counter at offset 24 exactly matches the 4-byte version-valid-for number at offset 92."
  var isInHeaderSizeValid: Bool {
    databaseSizeInPages != 0 && fileChangeCounter == versionValidFor
  }

  /// The database size the header claims, in bytes, when ``isInHeaderSizeValid``.
  var expectedFileSize: Int64? {
    isInHeaderSizeValid ? Int64(databaseSizeInPages) * Int64(pageSize) : nil
  }

  /// Parses a header; `nil` when `bytes` is shorter than 100 bytes, lacks the magic string, or has an
  /// impossible page size ("Must be a power of two between 512 and 32768 inclusive, or the value 1").
  ///
  /// - Parameter bytes: At least the first 100 bytes of the file.
  package init?(bytes: some Collection<UInt8>) {
    let header = Array(bytes.prefix(Self.length))
    guard header.count == Self.length, header.starts(with: Self.magic) else { return nil }
    func u16(_ offset: Int) -> UInt32 { UInt32(header[offset]) << 8 | UInt32(header[offset + 1]) }
    func u32(_ offset: Int) -> UInt32 { u16(offset) << 16 | u16(offset + 2) }
    let rawPageSize = u16(16)
    let pageSize = rawPageSize == 1 ? 65_536 : Int(rawPageSize)
    guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else { return nil }
    self.pageSize = pageSize
    writeVersion = header[18]
    readVersion = header[19]
    fileChangeCounter = u32(24)
    databaseSizeInPages = u32(28)
    schemaCookie = u32(40)
    textEncoding = u32(56)
    userVersion = Int32(bitPattern: u32(60))
    applicationID = Int32(bitPattern: u32(68))
    versionValidFor = u32(92)
    sqliteVersionNumber = u32(96)
  }
}

/// What is at a database path, found without modifying anything (no SQLite involved).
enum DatabaseFileStatus: Sendable, Hashable {
  /// Nothing at the path.
  case missing
  /// A 0-byte file: SQLite treats it as a valid empty database.
  case empty
  /// A symbolic link (not followed; SQLite would refuse it with `SQLITE_OPEN_NOFOLLOW`).
  case symbolicLink
  /// A directory (not followed through a symbolic link).
  case directory
  /// A socket, device, FIFO or other file that is neither regular nor a directory.
  case notRegularFile
  /// A regular file that is not an SQLite database: shorter than a header, wrong magic, bad page size.
  case notSQLite(fileSize: Int64)
  /// An SQLite database whose file is at least as long as its header claims.
  case sqlite(DatabaseFileHeader, fileSize: Int64)
  /// An SQLite database shorter than its (valid) in-header size: pages were cut off.
  case truncated(DatabaseFileHeader, fileSize: Int64)
}

/// Read-only checks of a database file before SQLite opens it.
enum DatabaseFile {
  /// Classifies the file at `path` without following a symbolic link and without writing.
  ///
  /// ```swift
  /// switch try DatabaseFile.classify(path: path) {
  /// case .missing, .empty: createOrMigrate()
  /// case .sqlite(let header, _) where header.applicationID == Migrator.applicationID: open()
  /// default: refuse()
  /// }
  /// ```
  /// - Parameter path: The database path.
  /// - Returns: The file's status; a `-wal` file next to it is not considered.
  /// - Throws: ``DatabaseFileError`` when the path exists but cannot be read (permissions, I/O).
  static func classify(path: String) throws(DatabaseFileError) -> DatabaseFileStatus {
    switch POSIX.linkStatus(path) {
    case .failure(let failure):
      if failure.code == POSIX.ErrorCode.noEntry { return .missing }
      throw DatabaseFileError(path: path, failure)
    case .success(let status):
      switch status.kind {
      case .symbolicLink: return .symbolicLink
      case .directory: return .directory
      case .other: return .notRegularFile
      case .regular: break
      }
    }
    let status: POSIX.FileStatus
    let bytes: [UInt8]
    do {
      (status, bytes) = try POSIX.readPrefix(of: path, count: DatabaseFileHeader.length)
    } catch {
      if error.code == POSIX.ErrorCode.noEntry { return .missing }
      if error.code == POSIX.ErrorCode.symbolicLinkLoop { return .symbolicLink }
      throw DatabaseFileError(path: path, error)
    }
    switch status.kind {
    case .regular: break
    case .directory: return .directory
    case .symbolicLink, .other: return .notRegularFile
    }
    if status.size == 0 { return .empty }
    guard let header = DatabaseFileHeader(bytes: bytes) else {
      return .notSQLite(fileSize: status.size)
    }
    if let expected = header.expectedFileSize, expected > status.size {
      return .truncated(header, fileSize: status.size)
    }
    return .sqlite(header, fileSize: status.size)
  }

  /// The largest page SQLite writes: a file whose creation was interrupted holds at most its first page.
  static let largestPageSize: Int64 = 65_536

  /// Whether the file at `path` (a regular file of `fileSize` bytes without an SQLite header) is a
  /// database whose creation a power loss interrupted, which SQLite's own recovery returns to an empty
  /// file: at most one page long, every byte zero, next to a hot rollback journal of a database that was
  /// empty (its header's "initial size of the database in pages" is 0), and no `-wal` file.
  ///
  /// SQLite writes a new database's first page through a rollback journal, whose header it syncs first.
  /// When the power fails before that page reaches the disk, the file can keep its new length and read
  /// as zeros, which SQLite refuses as "not a database" until a read-write connection replays the
  /// journal: the replay truncates the file to the size the journal recorded, 0. The file held nothing,
  /// so nothing is lost; a file with any other content is never taken for one. Reads, never writes.
  ///
  /// ```swift
  /// if case .notSQLite(let size) = status, DatabaseFile.isInterruptedCreation(path: path, fileSize: size) { … }
  /// ```
  static func isInterruptedCreation(path: String, fileSize: Int64) -> Bool {
    guard fileSize > 0, fileSize <= largestPageSize else { return false }
    if case .success(let wal) = POSIX.linkStatus(path + "-wal"), wal.size > 0 { return false }
    let journalPath = path + "-journal"
    guard case .success(let journalStatus) = POSIX.linkStatus(journalPath), journalStatus.kind == .regular
    else { return false }
    do {
      let (status, bytes) = try POSIX.readPrefix(of: path, count: Int(fileSize))
      guard status.kind == .regular, Int64(bytes.count) == fileSize, bytes.allSatisfy({ $0 == 0 }) else {
        return false
      }
      let (_, journal) = try POSIX.readPrefix(of: journalPath, count: RollbackJournalHeader.length)
      return RollbackJournalHeader(bytes: journal)?.initialDatabasePages == 0
    } catch {
      return false
    }
  }

  /// Whether `path` itself is a symbolic link (`lstat`; a link to a missing target counts).
  static func isSymbolicLink(path: String) -> Bool {
    guard case .success(let status) = POSIX.linkStatus(path) else { return false }
    return status.kind == .symbolicLink
  }
}

/// A file-system call failed while classifying a database file.
struct DatabaseFileError: Error, CustomStringConvertible, Sendable, Hashable {
  /// The path examined.
  package let path: String
  /// The call that failed (`lstat`, `open`, `fstat`, `read`).
  package let operation: String
  /// The `errno` it set.
  package let errno: Int32

  init(path: String, _ failure: POSIX.Failure) {
    self.path = path
    operation = failure.operation
    errno = failure.code
  }

  /// `"cannot read database file /x/app.db (open: Permission denied)"`.
  package var description: String {
    "cannot read database file \(path) (\(operation): \(POSIX.message(for: errno)))"
  }
}

/// The fields of a rollback journal's header this library reads, from the layout documented at
/// https://www.sqlite.org/fileformat.html ("4.1. The Rollback Journal"). Big-endian, like the database
/// header.
///
/// ```swift
/// let isOfANewDatabase = RollbackJournalHeader(bytes: prefix)?.initialDatabasePages == 0
/// ```
struct RollbackJournalHeader: Sendable, Hashable {
  /// The bytes read: the header string, the page count, the nonce, and the initial size.
  package static let length = 20
  /// "Header string: 0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7" (offset 0, 8 bytes). SQLite zeroes
  /// it, or deletes the file, when the transaction ends: a journal that still has it is hot.
  static let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]

  /// "Initial size of the database in pages" (offset 16): the size a rollback truncates the file to.
  let initialDatabasePages: UInt32

  /// Parses a header; nil when `bytes` is shorter than ``length`` or lacks the header string.
  package init?(bytes: some Collection<UInt8>) {
    let header = Array(bytes.prefix(Self.length))
    guard header.count == Self.length, header.starts(with: Self.magic) else { return nil }
    initialDatabasePages = header[16..<20].reduce(0) { $0 << 8 | UInt32($1) }
  }
}

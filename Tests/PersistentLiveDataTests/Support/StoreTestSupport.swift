import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers for the persistence tests: raw file access, the sqlite3 command-line
// client as an independent reader, fault injection (tmpfs, chattr) and error matching.

// MARK: - Files

/// The bytes of a file, or nil if it does not exist.
func fileBytes(_ path: String) -> Data? {
  FileManager.default.contents(atPath: path)
}

func fileExists(_ path: String) -> Bool {
  var info = stat()
  return lstat(path, &info) == 0
}

/// The permission bits of a file or folder (without following a symbolic link).
func permissions(_ path: String) -> mode_t? {
  var info = stat()
  guard lstat(path, &info) == 0 else { return nil }
  return info.st_mode & 0o7777
}

/// Writes `data` to `path`. The descriptor is close-on-exec: a child process another test starts at
/// the same moment must not inherit it (on a small file system, an inherited descriptor keeps a
/// removed file's blocks in use until that child exits).
func writeFile(_ path: String, _ data: Data) throws {
  let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
  guard descriptor >= 0 else { throw TestSupportError("cannot write \(path): errno \(errno)") }
  defer { close(descriptor) }
  var offset = 0
  while offset < data.count {
    let written = data.withUnsafeBytes { bytes in
      write(descriptor, bytes.baseAddress.map { $0 + offset }, data.count - offset)
    }
    guard written > 0 else { throw TestSupportError("cannot write \(path): errno \(errno)") }
    offset += written
  }
}

/// Deterministic pseudo-random bytes (never an SQLite header).
func pseudoRandomBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
  var state = seed
  var bytes = [UInt8](repeating: 0, count: count)
  for index in 0..<count {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
  }
  if count > 0 { bytes[0] = 0x7F }  // "SQLite format 3" starts with "S"
  return Data(bytes)
}

/// Overwrites `count` bytes at `offset` with a fixed garbage pattern, in place.
func overwriteBytes(_ path: String, at offset: Int, count: Int) throws {
  guard let handle = FileHandle(forUpdatingAtPath: path) else {
    throw TestSupportError("cannot open \(path) for update")
  }
  defer { try? handle.close() }
  try handle.seek(toOffset: UInt64(offset))
  try handle.write(contentsOf: Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0xA5) }))
}

func truncateFile(_ path: String, to size: Int) throws {
  guard truncate(path, off_t(size)) == 0 else { throw TestSupportError("truncate \(path): errno \(errno)") }
}

struct TestSupportError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

// MARK: - External processes

// `run(_:_:)` and `waitForExit(_:)`, which wait for a child with `waitpid`, are in PLDTestSupport.

/// The sqlite3 command-line client, an independent reader of our files.
enum SQLiteCLI {
  static let executable: String? = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/bin/sqlite3"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

  static var isAvailable: Bool { executable != nil }

  /// Runs `sql` on `path` and returns stdout with the trailing newline removed. Read-only unless asked.
  @discardableResult
  static func query(_ path: String, _ sql: String, readOnly: Bool = true) throws -> String {
    guard let executable else { throw TestSupportError("sqlite3 is not installed") }
    let result = try run(executable, (readOnly ? ["-readonly"] : []) + ["-batch", path, sql])
    guard result.status == 0 else {
      throw TestSupportError("sqlite3 \(sql) failed (\(result.status)): \(result.errorOutput)")
    }
    var text = result.output
    while text.hasSuffix("\n") { text.removeLast() }
    return text
  }

  /// Runs statements that change the file (for preparing foreign or newer databases).
  static func execute(_ path: String, _ sql: String) throws {
    try query(path, sql, readOnly: false)
  }
}

/// `chattr +i` / `-i` on each path that exists.
func setImmutable(_ immutable: Bool, _ paths: [String]) throws {
  for path in paths where fileExists(path) {
    let result = try run("/usr/bin/chattr", [immutable ? "+i" : "-i", path])
    guard result.status == 0 else {
      throw TestSupportError("chattr on \(path) failed: \(result.errorOutput)")
    }
  }
}

var isRoot: Bool { getuid() == 0 }
var chattrIsAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") }

// MARK: - tmpfs (disk full)

/// A small tmpfs mounted on a fresh folder. Root only; call `unmount()` in a `defer`.
final class SmallFileSystem {
  let directory: TemporaryDirectory
  var path: String { directory.path }
  private var mounted = false

  init(size: String) throws {
    directory = try TemporaryDirectory("tmpfs")
    guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(size)") == 0 else {
      throw TestSupportError("mount tmpfs failed: errno \(errno)")
    }
    mounted = true
  }

  /// Writes a file until the file system is full; returns its path. The descriptor is close-on-exec:
  /// a child process started meanwhile by another test would otherwise keep the filler's blocks in
  /// use after the test removes it.
  @discardableResult
  func fill(name: String = "filler") throws -> String {
    let filler = "\(path)/\(name)"
    let descriptor = open(filler, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw TestSupportError("cannot create filler: errno \(errno)") }
    defer { close(descriptor) }
    for chunkSize in [65_536, 4_096, 512, 1] {
      let chunk = [UInt8](repeating: 0x5A, count: chunkSize)
      while true {
        let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, chunkSize) }
        if written < chunkSize { break }
      }
    }
    return filler
  }

  /// The bytes the file system has free, or nil when `statvfs` fails.
  var freeBytes: UInt64? {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return nil }
    return UInt64(info.f_bavail) * UInt64(info.f_frsize)
  }

  /// Empties and removes `file` (a filler), then waits until at least `minimumFree` bytes are free;
  /// returns how long that took. Twice in whole `swift test` runs on CI, the store found the disk still
  /// full right after the filler's removal, though its descriptor is close-on-exec: a child that another
  /// test is starting holds a copy of every descriptor from its fork until its exec, which a busy host
  /// can delay, and an unlinked file keeps its blocks while any copy is open. Truncating frees them
  /// whoever holds the file. A test of what the library does "once space is freed" must see the space
  /// freed, or it tests the file system: this throws, with ``describe()``, when the space is still taken
  /// after `timeout`.
  @discardableResult
  func remove(
    _ file: String, waitingUntilFree minimumFree: UInt64, timeout: Duration = .seconds(10)
  ) throws
    -> Duration
  {
    guard truncate(file, 0) == 0 else { throw TestSupportError("cannot empty \(file): errno \(errno)") }
    try FileManager.default.removeItem(atPath: file)
    let clock = ContinuousClock()
    let start = clock.now
    while (freeBytes ?? 0) < minimumFree {
      guard clock.now - start < timeout else {
        throw TestSupportError(
          "\(minimumFree) bytes still not free \(timeout) after removing \(file): \(describe())")
      }
      usleep(5_000)
    }
    return clock.now - start
  }

  /// What a failed check should show: the free bytes, each file and its size, and every process that
  /// holds a file here open.
  func describe() -> String {
    let free = freeBytes.map { "\($0) bytes free" } ?? "statvfs failed"
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { name in
      let size = (try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)")[.size]) ?? "?"
      return "\(name) \(size)"
    }
    var holders: [String] = []
    for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
      for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? [] {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
          target.hasPrefix(path)
        {
          holders.append("pid \(pid) fd \(fd) → \(target)")
        }
      }
    }
    return "\(free); files: \(files); open by: \(holders)"
  }

  func unmount() {
    if mounted { umount2(directory.path, Int32(MNT_DETACH)) }
    mounted = false
  }

  deinit { unmount() }
}

// MARK: - Errors

extension PersistentLiveDataError {
  /// The name of the case, e.g. "diskFull", independent of its associated values.
  var caseName: String {
    Mirror(reflecting: self).children.first?.label ?? String(describing: self)
  }
}

/// Runs `body` and records an issue unless it throws the `PersistentLiveDataError` case named `name`.
@discardableResult
func expectStoreError<Result>(
  _ name: String, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws -> Result
) -> PersistentLiveDataError? {
  do {
    let result = try body()
    Issue.record(
      "expected PersistentLiveDataError.\(name), but no error was thrown (returned \(result)) \(comment.map { "— \($0)" } ?? "")",
      sourceLocation: sourceLocation)
    return nil
  } catch let error as PersistentLiveDataError {
    if error.caseName != name {
      Issue.record(
        "expected PersistentLiveDataError.\(name), got .\(error.caseName): \(error) \(comment.map { "— \($0)" } ?? "")",
        sourceLocation: sourceLocation)
    }
    return error
  } catch {
    Issue.record(
      "expected PersistentLiveDataError.\(name), got \(type(of: error)): \(error) \(comment.map { "— \($0)" } ?? "")",
      sourceLocation: sourceLocation)
    return nil
  }
}

// MARK: - Values

/// A Codable struct whose properties are declared out of alphabetical order.
struct Profile: Codable, Sendable, Equatable {
  var name: String
  var age: Int
  var tags: [String]
}

/// JSONEncoder refuses NaN, so `Reading(value: .nan)` cannot be encoded.
struct Reading: Codable, Sendable, Equatable {
  var value: Double
}

/// A value whose encoding fails on demand.
struct Refusing: Codable, Sendable, Equatable {
  struct Refused: Error {}
  var refuse: Bool
  var payload: Int

  func encode(to encoder: any Encoder) throws {
    if refuse { throw Refused() }
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(refuse, forKey: .refuse)
    try container.encode(payload, forKey: .payload)
  }
}

// MARK: - Observation

/// Polls `condition` on the main actor until it holds or `timeout` passes; returns whether it held.
@MainActor func eventually(
  timeout: Duration = .seconds(5), _ condition: @MainActor () -> Bool
) async -> Bool {
  let clock = ContinuousClock()
  let deadline = clock.now.advanced(by: mainActorWaitLimit(timeout))
  while clock.now < deadline {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return condition()
}

/// Runs `body(index)` on `count` real threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let finished = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  for index in 0..<count {
    finished.enter()
    let thread = Thread {
      start.wait()
      body(index)
      finished.leave()
    }
    thread.start()
  }
  for _ in 0..<count { start.signal() }
  finished.wait()
}

/// Collects errors thrown on other threads.
final class ErrorBox: @unchecked Sendable {
  private let lock = NSLock()
  private var collected: [String] = []

  func record(_ error: any Error) {
    lock.withLock { collected.append("\(error)") }
  }

  var errors: [String] { lock.withLock { collected } }
}

/// Real threads started together; `isFinished` tells when all have returned, without blocking.
final class RunningThreads: @unchecked Sendable {
  private let lock = NSLock()
  private var remaining: Int

  init(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    remaining = count
    for index in 0..<count {
      let thread = Thread { [self] in
        body(index)
        lock.withLock { remaining -= 1 }
      }
      thread.start()
    }
  }

  var isFinished: Bool { lock.withLock { remaining == 0 } }
}

/// SQL that takes the change log (schema version 6) out of a file again, triggers included: with
/// `DELETE FROM pld_migrations WHERE version >= 6` and a lower `user_version`, the file is as an older
/// release left it.
/// Takes a file of schema version 9 back to 8 (the release before compatibility marks): the column
/// goes. Statements only: the caller also sets `user_version`.
let dropCompatibilityMarksSQL = """
  ALTER TABLE pld_migrations DROP COLUMN compatibility; DELETE FROM pld_migrations WHERE version = 9;
  """

/// Takes a file of schema version 9 back to 7 (the release before collections): the marks go
/// (``dropCompatibilityMarksSQL``), then the collections' tables and triggers. Statements only: the
/// caller also sets `user_version`.
let dropCollectionsSQL =
  dropCompatibilityMarksSQL + """
    DROP TRIGGER IF EXISTS pld_collection_log_on_value; DROP TRIGGER IF EXISTS pld_collection_log_on_removal;
    DROP TRIGGER IF EXISTS pld_collection_log_on_removal_again;
    DROP TABLE IF EXISTS pld_collection_log; DROP TABLE IF EXISTS pld_collections;
    DELETE FROM pld_migrations WHERE version = 8;
    """

/// Takes a file of schema version 8 back to 6 (the release before `WriteAttribution`): collections go
/// (``dropCollectionsSQL``), then the attribution columns. Statements only: the caller also deletes the
/// `pld_migrations` row and sets `user_version`.
let dropAttributionSQL =
  dropCollectionsSQL + """
    ALTER TABLE pld_values DROP COLUMN author; ALTER TABLE pld_values DROP COLUMN reason;
    ALTER TABLE pld_removed_keys DROP COLUMN author; ALTER TABLE pld_removed_keys DROP COLUMN reason;
    DELETE FROM pld_migrations WHERE version = 7;
    """

let dropChangeLogSQL = """
  DROP TRIGGER IF EXISTS pld_change_log_on_value; DROP TRIGGER IF EXISTS pld_change_log_on_removal;
  DROP TRIGGER IF EXISTS pld_change_log_on_removal_again; DROP TABLE IF EXISTS pld_change_log;
  DROP TABLE IF EXISTS pld_change_log_readers;
  """

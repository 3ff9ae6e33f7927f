// A child process for the multi-process and crash tests. It reports with raw write(2) calls so that
// every line reaches the parent even if the process is killed right after.
//
//   pld-test-child write DB KEY COUNT TOTAL TAG
//       sets COUNT values {tag, seq} on KEY, observing KEY; waits until KEY reaches version TOTAL
//       (other writers included); prints "final VERSION" and "order ok|bad".
//   pld-test-child observe DB KEY VERSION
//       prints "ready", then "seen VERSION" when KEY reaches VERSION by a write of another process.
//   pld-test-child set DB KEY INT
//       sets KEY (an Int) once and prints "ack VERSION".
//   pld-test-child daemon DB limit
//       the daemon of the DocC article (Daemon.swift): logs "ready", a line per change of "limit", and
//       "closed" after SIGINT or SIGTERM, to standard error.
//   pld-test-child cas DB KEY COUNT
//       until it has written COUNT times, reads KEY (an Int) from the file and writes it + 1 with
//       set(_:ifVersion:) the version read; prints "cas COUNT CONFLICTS" at the end.
//   pld-test-child set-series DB KEY COUNT PAUSE_MS
//       sets KEY (an Int) to 1, 2 … COUNT, printing "ack VERSION" after each and pausing PAUSE_MS.
//   pld-test-child set-all DB KEY INT [DB…]
//       sets KEY (an Int) once in each DB (opened and closed one after the other), then prints "done N".
//   pld-test-child truncate DB
//       checkpoints DB with wal_checkpoint(TRUNCATE) (the -wal shrinks to 0 bytes); prints "truncated".
//   pld-test-child census DIR COUNT
//       opens COUNT stores in COUNT folders under DIR, closes them, prints "inotify FDS WATCHES_OPEN
//       WATCHES_CLOSED fds BEFORE AFTER threads BEFORE AFTER" (see Census.swift).
//   pld-test-child idle DB KEYS SECONDS
//       opens KEYS live values, writes nothing for SECONDS and prints "cpu MICROSECONDS" (user + system).
//   pld-test-child ack-loop DB KEY DURABILITY
//       sets 1, 2, 3 … on KEY forever, printing "ack N" after each set returns (for kill tests).
//   pld-test-child records DB KEY full|normal
//       sets CrashRecord(version: N) as version N of KEY forever, printing "ack N" after each set returns.
//   pld-test-child power-loss DB KEY full|normal CRASH_AFTER SEED
//       as `records`, through the pld_crashsim VFS: after CRASH_AFTER writes/syncs the unsynced writes are
//       partly reverted or torn and the process exits with status 99 (a simulated power loss). Calls
//       flush() (a checkpoint) every 64 versions.
//   pld-test-child power-loss-timed DB KEY CRASH_AFTER SEED SYNC_MS
//       as `power-loss` under .normal without checkpoints, each acknowledgement reported with its time:
//       "ackt VERSION NANOSECONDS" (CLOCK_MONOTONIC, as the VFS's "crash NANOSECONDS" line). SYNC_MS is
//       StoreOptions.walSyncInterval in milliseconds; 0 for none. About 200 writes a second.
//   pld-test-child power-loss-raw DB KEY CRASH_AFTER SEED
//       the negative control: raw SQLite with synchronous=OFF, same rows, same VFS. Must lose or corrupt.
//   pld-test-child note-v1-read DB KEY throwError|useDefault|lastDecodable
//       build 1 of a type other builds evolve (NoteV1, schema 1): opens KEY under the policy and prints
//       "restore VERSION TEXT" or "restore-error CASE DETAILS", then "history N" (versions that decode),
//       "entries N", "rollback-error CASE" or "rollback-ok" for a rollback to the newest version, "done".
//   pld-test-child note-v1-set DB KEY TEXT
//       build 1 writes NoteV1(text: TEXT, tags: "") under .useDefault and prints "ack VERSION".
import Foundation
import PLDCrashSim
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

struct Tagged: Codable, Sendable, Equatable {
  var tag: String
  var seq: Int
}

/// The value written as version `version` by the crash modes: its own version and a filler whose length
/// (20…2,519 bytes, some spilling to overflow pages) and letter are derived from the version, so a reader
/// can tell that a row holds exactly what was written for it. Tests/…/Reliability/CrashRecord.swift has
/// the same definition.
struct CrashRecord: Codable, Sendable, Equatable {
  var version: Int64
  var fill: String

  init(version: Int64) {
    self.version = version
    let letter = Character(Unicode.Scalar(UInt8(97 + Int(version % 26))))
    fill = String(repeating: letter, count: 20 + Int((version &* 7_919) % 2_500))
  }
}

/// Options of a child that only writes: no watch, no polling, no integrity check.
func quietOptions() -> StoreOptions {
  var options = StoreOptions()
  options.externalChangePollInterval = nil
  options.verifiesIntegrityOnOpen = false
  return options
}

/// Build 1 of the type the schema tests evolve:
/// Tests/PersistentLiveDataTests/EvolvingValues/EvolvingNote.swift has the same definition (and builds 2
/// and 3).
struct NoteV1: Codable, Sendable, Equatable {
  var text: String
  var tags: String
}

/// The name of a PersistentLiveDataError case, or the type of another error.
func caseName(_ error: any Error) -> String {
  guard let error = error as? PersistentLiveDataError else { return "\(type(of: error))" }
  return Mirror(reflecting: error).children.first?.label ?? "\(error)"
}

/// Build 1 reading a key other builds may have written (`note-v1-read`).
func readAsNoteV1(path: String, key: String, policy: DecodeFailurePolicy) throws {
  let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: policy))
  let note: PersistentLiveData<NoteV1>
  do {
    note = try store.liveData(key, default: NoteV1(text: "", tags: ""))
  } catch {
    if case .valueSchemaTooNew(_, let version, let stored, let supported)? = error as? PersistentLiveDataError
    {
      report("restore-error valueSchemaTooNew \(version) stored \(stored) supported \(supported)")
    } else {
      report("restore-error \(caseName(error))")
    }
    report("done")
    return
  }
  report("restore \(note.version) \(note.value.text)")
  report("history \(try note.history().count)")
  report("entries \(try note.historyEntries().count)")
  do {
    try note.rollback(to: note.version)
    report("rollback-ok")
  } catch {
    report("rollback-error \(caseName(error))")
  }
  try store.close()
  report("done")
}

/// Options of the crash modes: polling off, so that the only I/O is the writes under test.
func crashOptions(_ name: String) -> StoreOptions {
  var options = StoreOptions(durability: name == "normal" ? .normal : .full)
  options.externalChangePollInterval = nil
  return options
}

/// Sets CrashRecord(version: N) as version N of `key` forever, reporting each acknowledged version;
/// with `flushEvery`, also checkpoints (`flush()`) every that many versions.
func writeRecordsForever(
  path: String, key: String, durability: String, flushEvery: Int64? = nil
) throws -> Never {
  let store = try PersistentStore(path: path, options: crashOptions(durability))
  let data = try store.liveData(key, default: CrashRecord(version: 0))
  while true {
    let next = data.version + 1
    try data.set(CrashRecord(version: next))
    report("ack \(next)")
    if let flushEvery, next % flushEvery == 0 { try store.flush() }
  }
}

/// The same records written by `writers` tasks at once through the store's group commit
/// (`store.write { update }`), each reporting the versions it was acknowledged: acknowledgements may come
/// out of order, and up to `writers` versions may be committed but not yet acknowledged.
func writeRecordsConcurrently(
  path: String, key: String, durability: String, writers: Int, flushEvery: Int64? = nil
) async throws -> Never {
  let store = try PersistentStore(path: path, options: crashOptions(durability))
  let data = try store.liveData(key, default: CrashRecord(version: 0))
  try await withThrowingTaskGroup(of: Void.self) { group in
    for _ in 0..<writers {
      group.addTask {
        while true {
          let record = try await store.write {
            try data.update { $0 = CrashRecord(version: $0.version + 1) }
          }
          report("ack \(record.version)")
          if let flushEvery, record.version % flushEvery == 0 { try store.flush() }
        }
      }
    }
    try await group.waitForAll()
  }
  fail("the writers stopped")
}

/// The negative control: the same rows written with raw SQLite and `synchronous=OFF` (no fsync at all).
func writeRawRecordsForever(path: String, key: String) throws -> Never {
  let connection = try SQLiteConnection(path: path, mode: .readWrite, create: true)
  try connection.execute(
    """
    PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
    CREATE TABLE IF NOT EXISTS pld_values (key TEXT NOT NULL, version INTEGER NOT NULL,
      written_at INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (key, version)) WITHOUT ROWID;
    """)
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  var next =
    (try connection.scalarInt64("SELECT max(version) FROM pld_values WHERE key = ?", [.text(key)]) ?? 0) + 1
  while true {
    let payload = try encoder.encode(CrashRecord(version: next))
    try connection.begin(.immediate)
    try connection.run(
      "INSERT INTO pld_values (key, version, written_at, payload) VALUES (?, ?, 0, ?)",
      [.text(key), .integer(next), .text(String(decoding: payload, as: UTF8.self))])
    try connection.commit()
    report("ack \(next)")
    next += 1
  }
}

func report(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
  report("error \(message)")
  exit(2)
}

@MainActor
final class Recorder {
  var seen: [Tagged] = []
  var isOrdered: Bool {
    var lastSeq: [String: Int] = [:]
    for value in seen {
      if let last = lastSeq[value.tag], value.seq <= last { return false }
      lastSeq[value.tag] = value.seq
    }
    return true
  }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 || (arguments.count == 3 && arguments[1] == "truncate") else { fail("usage") }
let mode = arguments[1]
let path = arguments[2]
let key = arguments.count > 3 ? arguments[3] : ""

do {
  switch mode {
  case "write":
    guard arguments.count == 7, let count = Int(arguments[4]), let total = Int64(arguments[5]) else {
      fail("usage: write DB KEY COUNT TOTAL TAG")
    }
    let tag = arguments[6]
    let store = try PersistentStore(path: path)
    let data = try store.liveData(key, default: Tagged(tag: "", seq: 0))
    let recorder = Recorder()
    data.observeForever(receiveCurrent: false) { recorder.seen.append($0) }
    for seq in 1...count {
      // SQLite's busy handler is not fair: on a loaded machine the other writer can hold the lock
      // through a whole busy timeout. What this mode tests is the versions, so a busy write is retried.
      while true {
        do {
          try data.set(Tagged(tag: tag, seq: seq))
          break
        } catch PersistentLiveDataError.busy {
          try await Task.sleep(for: .milliseconds(1))
        }
      }
      if seq % 50 == 0 { try await Task.sleep(for: .milliseconds(1)) }
    }
    let deadline = ContinuousClock.now + .seconds(20)
    while data.version < total, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    try await Task.sleep(for: .milliseconds(100))
    report("final \(data.version)")
    report("order \(recorder.isOrdered ? "ok" : "bad") seen \(recorder.seen.count)")
    try store.close()
  case "observe":
    guard arguments.count == 5, let target = Int64(arguments[4]) else {
      fail("usage: observe DB KEY VERSION")
    }
    let store = try PersistentStore(path: path)
    let data = try store.liveData(key, default: Tagged(tag: "", seq: 0))
    let reached = SingleEvent<Int64>()
    data.observeForever { _ in
      if data.version >= target { reached.trigger(data.version) }
    }
    report("ready")
    let deadline = ContinuousClock.now + .seconds(20)
    while !reached.isTriggered, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(2))
    }
    report(reached.isTriggered ? "seen \(data.version)" : "timeout \(data.version)")
  case "set":
    guard arguments.count == 5, let number = Int(arguments[4]) else { fail("usage: set DB KEY INT") }
    let store = try PersistentStore(path: path)
    let data = try store.liveData(key, default: 0)
    try data.set(number)
    report("ack \(data.version)")
  case "cas":
    guard arguments.count == 5, let count = Int(arguments[4]) else { fail("usage: cas DB KEY COUNT") }
    let store = try PersistentStore(path: path, options: quietOptions())
    let data = try store.liveData(key, default: 0)
    var (written, conflicts) = (0, 0)
    while written < count {
      // The file's newest version, not memory's (which hears of other processes' writes a moment later).
      let newest = try data.history(limit: 1).first
      do {
        try data.set((newest?.value ?? 0) + 1, ifVersion: newest?.version ?? 0)
        written += 1
      } catch is VersionConflict {
        conflicts += 1
      }
    }
    report("cas \(written) \(conflicts)")
  case "set-series":
    guard arguments.count == 6, let count = Int(arguments[4]), let pause = Int(arguments[5]) else {
      fail("usage: set-series DB KEY COUNT PAUSE_MS")
    }
    let store = try PersistentStore(path: path, options: quietOptions())
    let data = try store.liveData(key, default: 0)
    for number in 1...max(1, count) {
      try data.set(number)
      report("ack \(data.version)")
      try await Task.sleep(for: .milliseconds(pause))
    }
  case "set-retained":
    // Writes COUNT versions with a retention option of KEEP: a key's recorded retention must win.
    guard arguments.count == 6, let count = Int(arguments[4]), let keep = Int(arguments[5]) else {
      fail("usage: set-retained DB KEY COUNT KEEP")
    }
    var options = quietOptions()
    options.retention = .last(keep)
    let store = try PersistentStore(path: path, options: options)
    let data = try store.liveData(key, default: 0)
    for number in 1...max(1, count) { try data.set(number) }
    report("ack \(data.version) history \(try data.history().count)")
    try store.close()
  case "set-all":
    guard arguments.count >= 5, let number = Int(arguments[4]) else {
      fail("usage: set-all DB KEY INT [DB…]")
    }
    let paths = [path] + arguments.dropFirst(5)
    for path in paths {
      let store = try PersistentStore(path: path, options: quietOptions())
      try store.liveData(key, default: 0).set(number)
      try store.close()
    }
    report("done \(paths.count)")
  case "truncate":
    let connection = try SQLiteConnection(path: path, mode: .readWrite, create: false)
    try connection.busyTimeout(5_000)
    // A connection that has read nothing has not opened the WAL yet: its checkpoint would do nothing.
    _ = try connection.scalarInt64("SELECT count(*) FROM sqlite_master")
    _ = try connection.walCheckpoint(.truncate)
    connection.close()
    report("truncated")
  case "census":
    guard let count = Int(key) else { fail("usage: census DIR COUNT") }
    report(try Census.run(folder: path, stores: count))
  case "idle":
    guard arguments.count == 5, let keys = Int(key), let seconds = Double(arguments[4]) else {
      fail("usage: idle DB KEYS SECONDS")
    }
    let store = try PersistentStore(path: path)
    let values = try (0..<keys).map { try store.liveData("key-\($0)", default: $0) }
    var before = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &before)
    try await Task.sleep(for: .seconds(seconds))
    var after = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &after)
    func micros(_ time: timeval) -> Int { time.tv_sec * 1_000_000 + Int(time.tv_usec) }
    let used =
      micros(after.ru_utime) - micros(before.ru_utime) + micros(after.ru_stime) - micros(before.ru_stime)
    report("cpu \(used) keys \(values.count)")
  case "ack-loop":
    let durability: Durability = arguments.count > 4 && arguments[4] == "normal" ? .normal : .full
    let store = try PersistentStore(path: path, options: StoreOptions(durability: durability))
    let data = try store.liveData(key, default: 0)
    var next = Int(data.version) + 1
    while true {
      try data.set(next)
      report("ack \(next)")
      next += 1
    }
  case "records":
    guard arguments.count == 5 else { fail("usage: records DB KEY full|normal") }
    try writeRecordsForever(path: path, key: key, durability: arguments[4])
  case "records-async":
    guard arguments.count == 6, let writers = Int(arguments[5]) else {
      fail("usage: records-async DB KEY full|normal WRITERS")
    }
    try await writeRecordsConcurrently(path: path, key: key, durability: arguments[4], writers: writers)
  case "power-loss-async":
    guard arguments.count == 8, let crashAfter = Int(arguments[5]), let seed = UInt32(arguments[6]),
      let writers = Int(arguments[7])
    else {
      fail("usage: power-loss-async DB KEY full|normal CRASH_AFTER SEED WRITERS")
    }
    guard pld_crashsim_register(crashAfter, seed) == 0 else { fail("cannot register the crash VFS") }
    try await writeRecordsConcurrently(
      path: path, key: key, durability: arguments[4], writers: writers, flushEvery: 64)
  case "power-loss":
    guard arguments.count == 7, let crashAfter = Int(arguments[5]), let seed = UInt32(arguments[6]) else {
      fail("usage: power-loss DB KEY full|normal CRASH_AFTER SEED")
    }
    guard pld_crashsim_register(crashAfter, seed) == 0 else { fail("cannot register the crash VFS") }
    // Checkpoints every 64 versions, so that short runs also lose power in the middle of one.
    try writeRecordsForever(path: path, key: key, durability: arguments[4], flushEvery: 64)
  case "power-loss-timed":
    guard arguments.count == 7, let crashAfter = Int(arguments[4]), let seed = UInt32(arguments[5]),
      let syncMilliseconds = Int(arguments[6])
    else {
      fail("usage: power-loss-timed DB KEY CRASH_AFTER SEED SYNC_MS")
    }
    guard pld_crashsim_register(crashAfter, seed) == 0 else { fail("cannot register the crash VFS") }
    var options = crashOptions("normal")
    options.walSyncInterval = syncMilliseconds > 0 ? .milliseconds(syncMilliseconds) : nil
    let store = try PersistentStore(path: path, options: options)
    let data = try store.liveData(key, default: CrashRecord(version: 0))
    while true {
      let next = data.version + 1
      try data.set(CrashRecord(version: next))
      var now = timespec()
      clock_gettime(CLOCK_MONOTONIC, &now)
      report("ackt \(next) \(Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))")
      // An app's pace rather than a benchmark's: at full speed SQLite's automatic checkpoint (every
      // 1,000 WAL pages) would sync every few milliseconds anyway, and hide what the test is about.
      usleep(4_000)
    }
  case "daemon":
    try await serve(storePath: path)
  case "power-loss-raw":
    guard arguments.count == 6, let crashAfter = Int(arguments[4]), let seed = UInt32(arguments[5]) else {
      fail("usage: power-loss-raw DB KEY CRASH_AFTER SEED")
    }
    guard pld_crashsim_register(crashAfter, seed) == 0 else { fail("cannot register the crash VFS") }
    try writeRawRecordsForever(path: path, key: key)
  case "note-v1-read":
    let policies: [String: DecodeFailurePolicy] = [
      "throwError": .throwError, "useDefault": .useDefault, "lastDecodable": .lastDecodable,
    ]
    guard arguments.count == 5, let policy = policies[arguments[4]] else {
      fail("usage: note-v1-read DB KEY throwError|useDefault|lastDecodable")
    }
    try readAsNoteV1(path: path, key: key, policy: policy)
  case "note-v1-set":
    guard arguments.count == 5 else { fail("usage: note-v1-set DB KEY TEXT") }
    let store = try PersistentStore(path: path, options: StoreOptions(onUndecodable: .useDefault))
    let note = try store.liveData(key, default: NoteV1(text: "", tags: ""))
    try note.set(NoteV1(text: arguments[4], tags: ""))
    report("ack \(note.version)")
    try store.close()
  case "remove":
    let store = try PersistentStore(path: path)
    try store.removeKey(key)
    report("removed")
  case "collection-changes":
    // KEY is the collection's name; prints each change of an Int collection after the checkpoint (JSON,
    // or "-" for none) as "ID VERSION VALUE|nil", then the last checkpoint's JSON.
    guard arguments.count == 6, let count = Int(arguments[5]) else {
      fail("usage: collection-changes DB NAME CHECKPOINT|- COUNT")
    }
    let store = try PersistentStore(path: path)
    let numbers = try store.collection(key, of: Int.self)
    let checkpoint =
      arguments[4] == "-"
      ? nil : try JSONDecoder().decode(CollectionCheckpoint.self, from: Data(arguments[4].utf8))
    var last = checkpoint
    var seen = 0
    for try await change in numbers.changes(since: checkpoint) {
      report("\(change.id) \(change.version) \(change.value.map(String.init) ?? "nil")")
      last = change.checkpoint
      seen += 1
      if seen == count { break }
    }
    report(String(decoding: try JSONEncoder().encode(last), as: UTF8.self))
    try store.close()
  default:
    fail("unknown mode \(mode)")
  }
} catch {
  fail("\(error)")
}

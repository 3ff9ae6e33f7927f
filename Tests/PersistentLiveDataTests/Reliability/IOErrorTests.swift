import Foundation
import PLDCrashSim
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension Reliability.InjectedFaults {
  /// SQLite's own I/O-error loop, on the library: the N-th read, write, sync or truncate of the store's
  /// files fails, for N = 1, 2, 3 … until the operation completes without reaching the fault — once
  /// (a transient error) and from then on (a persistent one, cleared afterwards). After every fault:
  /// integrity holds; memory, observers and disk agree (a `set` that threw changed nothing anywhere, one
  /// that returned is everywhere); and the next `set` works once the fault is gone.
  ///
  /// The faults come from the `pld_crashsim` VFS (Tests/Helpers/PLDCrashSim), registered as this
  /// process's default VFS; it passes every file outside the test's folder straight through, so the
  /// other tests running meanwhile are unaffected.
  @MainActor @Suite struct IOErrorTests {
    /// What one scenario saw over all its fault points.
    struct Figures {
      var faultPoints = 0
      var failedSets = 0
      var setsThatSurvivedTheirFault = 0
      /// Failed sets whose commit nevertheless reappears when the files are reopened after a crash
      /// (a failed fsync of the WAL: the frames are written, their durability is unknown).
      var failedButRecoveredAfterCrash = 0
      var errorCases: Set<String> = []
    }

    init() throws {
      #expect(pld_crashsim_register(0, 0) == 0, "the fault-injecting VFS could not be registered")
    }

    nonisolated static func options() -> StoreOptions {
      var options = StoreOptions()
      options.externalChangePollInterval = nil  // no background I/O between the faults
      return options
    }

    /// A payload of several pages, so that a write is several frames.
    nonisolated static func value(_ number: Int) -> String {
      "\(number):" + String(repeating: Character(Unicode.Scalar(UInt8(65 + number % 26))), count: 9_000)
    }

    /// The folder's real path: SQLite names the files it opens by their full path.
    nonisolated static func realPath(_ folder: TemporaryDirectory) -> String {
      guard let resolved = realpath(folder.path, nil) else { return folder.path }
      defer { free(resolved) }
      return String(cString: resolved)
    }

    /// The newest version of `key` and the integrity of the file as another connection sees them.
    nonisolated static func disk(_ path: String, key: String) throws -> (latest: Int64, integrity: String) {
      let connection = try SQLiteConnection(path: path, mode: .readWrite)
      defer { connection.close() }
      let integrity = try connection.scalarText("PRAGMA integrity_check") ?? "no answer"
      let latest =
        try connection.scalarInt64(
          "SELECT max(version) FROM pld_values WHERE key = ?", [.text(key)]) ?? 0
      return (latest, integrity)
    }

    /// The newest version of `key` if the process died now: the files copied aside and reopened, so
    /// that SQLite recovers the WAL from what is in it.
    nonisolated static func afterCrash(
      _ path: String, key: String, scratch: TemporaryDirectory
    ) throws -> Int64 {
      let copy = scratch.path("crash-\(UUID().uuidString).db")
      for suffix in ["", "-wal"] where fileExists(path + suffix) {
        try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
      }
      return try disk(copy, key: key).latest
    }

    /// Runs the fault loop for `scenario`: `setUp` prepares a fresh store, `operation` is what faults.
    func faultLoop(
      persistent: Bool, label: String,
      operation: (PersistentStore, PersistentLiveData<String>) throws -> Void,
      configure: (PersistentStore) throws -> Void = { _ in }
    ) async throws -> Figures {
      var figures = Figures()
      let key = "io/value"
      for point in 1...2_000 {
        await Task.yield()  // the main actor is shared with other suites' observers
        let folder = try TemporaryDirectory("ioerr")
        let scratch = try TemporaryDirectory("ioerr-crash")
        let path = folder.path("store.db")
        let store = try PersistentStore(path: path, options: Self.options())
        try configure(store)
        let live = try store.liveData(key, default: "")
        try live.set(Self.value(1))
        let recorder = DeliveryRecorder<String>()
        let observer = live.observeForever(receiveCurrent: false, recorder.callback)
        defer { observer.cancel() }

        pld_crashsim_set_ioerr(point, persistent ? 1 : 0, Self.realPath(folder))
        let outcome = Result { try operation(store, live) }
        let hits = pld_crashsim_ioerr_hits()
        pld_crashsim_set_ioerr(0, 0, nil)
        let context = "\(label) fault at I/O operation \(point)"
        if hits == 0 {
          // The operation completed before reaching the fault point: the loop is done.
          if case .failure(let error) = outcome {
            Issue.record("\(context): failed without a fault: \(error)")
          } else {
            recorder.expect([Self.value(2)], "\(context): observers")
          }
          break
        }
        figures.faultPoints += 1

        let expected: Int64
        switch outcome {
        case .success:
          figures.setsThatSurvivedTheirFault += 1
          expected = 2
        case .failure(let error):
          figures.failedSets += 1
          if let error = error as? PersistentLiveDataError {
            figures.errorCases.insert(error.caseName)
          } else {
            Issue.record("\(context): not a PersistentLiveDataError: \(type(of: error)) \(error)")
          }
          expected = 1
          if try Self.afterCrash(path, key: key, scratch: scratch) == 2 {
            figures.failedButRecoveredAfterCrash += 1
          }
        }
        // Memory, observers and disk agree.
        #expect(live.version == expected, "\(context): version in memory")
        #expect(live.value == Self.value(Int(expected)), "\(context): value in memory")
        recorder.expect(expected == 2 ? [Self.value(2)] : [], "\(context): observers")
        let disk = try Self.disk(path, key: key)
        #expect(disk.integrity == "ok", "\(context)")
        #expect(disk.latest == expected, "\(context): on disk")
        #expect(try live.history().map(\.version) == Array((1...expected).reversed()), "\(context)")

        // Once the fault is gone, the next set works and continues without a gap.
        do {
          try live.set(Self.value(Int(expected) + 1))
        } catch {
          Issue.record("\(context): the set after the fault failed: \(error)")
          continue
        }
        #expect(live.version == expected + 1, "\(context)")
        recorder.expect([Self.value(Int(expected) + 1)], "\(context)")
        let recovered = try Self.disk(path, key: key)
        #expect(recovered.latest == expected + 1 && recovered.integrity == "ok", "\(context): after recovery")
        try store.close()
        let reopened = try PersistentStore(path: path, options: Self.options())
        #expect(try reopened.liveData(key, default: "").version == expected + 1, "\(context): reopened")
        try reopened.close()
      }
      #expect(figures.faultPoints > 0, "\(label): no fault was ever injected")
      Reliability.figure(
        "io-error scenario=\"\(label)\" faultPoints=\(figures.faultPoints) failedSets=\(figures.failedSets) "
          + "setsThatSurvivedTheirFault=\(figures.setsThatSurvivedTheirFault) "
          + "failedButRecoveredAfterCrash=\(figures.failedButRecoveredAfterCrash) "
          + "errors=\(figures.errorCases.sorted())")
      return figures
    }

    @Test(arguments: [false, true])
    func faultInASetChangesNothingAnywhereAndTheNextSetWorks(persistent: Bool) async throws {
      _ = try await faultLoop(persistent: persistent, label: "set \(persistent ? "persistent" : "transient")")
      {
        _, live in try live.set(Self.value(2))
      }
    }

    /// Every commit also runs a checkpoint (copying the WAL into the database file, syncing it), so the
    /// faults also land in the checkpoint that follows a successful commit.
    @Test(arguments: [false, true])
    func faultInASetWithItsCheckpointChangesNothingAnywhere(persistent: Bool) async throws {
      _ = try await faultLoop(
        persistent: persistent, label: "set+checkpoint \(persistent ? "persistent" : "transient")",
        operation: { _, live in try live.set(Self.value(2)) },
        configure: { store in
          _ = try store.database.withConnection { connection, _ in
            try connection.setPragma("wal_autocheckpoint", 1)
          }
        })
    }

    /// A transaction writing the key and another one: both or neither, everywhere.
    @Test(arguments: [false, true])
    func faultInATransactionAppliesAllOrNothing(persistent: Bool) async throws {
      _ = try await faultLoop(
        persistent: persistent, label: "transaction \(persistent ? "persistent" : "transient")"
      ) {
        store, live in
        let other = try store.liveData("io/other", default: 0)
        do {
          try store.transaction {
            try other.set(1)
            try live.set(Self.value(2))
          }
        } catch {
          #expect(other.version == 0, "the other key of a failed transaction changed in memory")
          #expect(try store.keys() == ["io/value"], "the other key of a failed transaction is on disk")
          throw error
        }
        #expect(other.version == 1)
      }
    }

    /// Opening a file a killed writer left with a hot WAL (recovery, migrations check, quick_check, the
    /// restore of the latest rows): a fault gives a typed error and changes nothing — opening again
    /// without the fault restores exactly what a clean open restores.
    /// Not on the main actor (no observers involved): it runs long under a sanitizer.
    @Test(arguments: [false, true])
    nonisolated func faultWhileOpeningAStoreGivesATypedErrorAndTheNextOpenRestoresEverything(
      persistent: Bool
    ) throws {
      let key = "crash/record"
      let source = try TemporaryDirectory("ioerr-source")
      let child = try ChildProcess(
        ChildProcess.testChildPath, ["records", source.path("store.db"), key, "full"])
      while let line = child.readLine(), (acknowledgedVersions([line]).first ?? 0) < 40 {}
      child.kill(SIGKILL)
      child.wait()
      #expect(fileExists(source.path("store.db") + "-wal"), "the killed writer should leave a WAL to recover")
      func copy(to folder: TemporaryDirectory) throws -> String {
        for suffix in ["", "-wal"] where fileExists(source.path("store.db") + suffix) {
          try FileManager.default.copyItem(
            atPath: source.path("store.db") + suffix, toPath: folder.path("store.db") + suffix)
        }
        return folder.path("store.db")
      }
      let reference = try TemporaryDirectory("ioerr-reference")
      let expected = CrashInspection.inspect(path: try copy(to: reference), key: key, storeFirst: true)
      #expect(expected.isSound && expected.latest >= 40, "\(expected.summary)")

      var faultPoints = 0
      var errorCases: Set<String> = []
      // Under a sanitizer every 5th fault point: the same code paths, a fifth of the time.
      for point in stride(from: 1, through: 2_000, by: Reliability.underSanitizer ? 5 : 1) {
        let folder = try TemporaryDirectory("ioerr-open")
        let path = try copy(to: folder)
        pld_crashsim_set_ioerr(point, persistent ? 1 : 0, Self.realPath(folder))
        let outcome = Result { () throws -> Int64 in
          let store = try PersistentStore(path: path, options: Self.options())
          defer { try? store.close() }
          return try store.liveData(key, default: CrashRecord(version: 0)).version
        }
        let hits = pld_crashsim_ioerr_hits()
        pld_crashsim_set_ioerr(0, 0, nil)
        let context = "open, fault at I/O operation \(point) (\(persistent ? "persistent" : "transient"))"
        if hits == 0 {
          #expect(try outcome.get() == expected.latest, "\(context)")
          break
        }
        faultPoints += 1
        switch outcome {
        case .success(let version):
          #expect(version == expected.latest, "\(context): opened despite the fault, restored \(version)")
        case .failure(let error as PersistentLiveDataError):
          errorCases.insert(error.caseName)
          // A page that could not be read is an I/O error, not a damaged file (which apps may move aside).
          #expect(error.caseName != "corrupt", "\(context): a read failure reported as damage: \(error)")
        case .failure(let error):
          Issue.record("\(context): not a PersistentLiveDataError: \(type(of: error)) \(error)")
        }
        let after = CrashInspection.inspect(path: path, key: key, storeFirst: point % 2 == 0)
        #expect(after.isSound && after.latest == expected.latest, "\(context): \(after.summary)")
      }
      #expect(faultPoints > 0)
      Reliability.figure(
        "io-error scenario=\"open \(persistent ? "persistent" : "transient")\" faultPoints=\(faultPoints) "
          + "errors=\(errorCases.sorted())")
    }
  }
}

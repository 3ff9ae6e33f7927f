import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

extension Persistence {
  /// A `set` that throws changes nothing — not `value`, not `version`, not observers, not the file — and the
  /// next `set` works once the cause is gone, with the next gap-free version.
  @MainActor @Suite struct FailedWriteTests {
    /// What must not change when a write fails.
    struct Snapshot<Value: Codable & Sendable & Equatable>: Equatable {
      let value: Value
      let version: Int64
      let history: [Entry]
      let databaseBytes: Data?

      struct Entry: Equatable {
        let version: Int64
        let value: Value
        let writtenAt: Date
      }

      init(_ live: PersistentLiveData<Value>, path: String) throws {
        value = live.value
        version = live.version
        history = try live.history().map {
          Entry(version: $0.version, value: $0.value, writtenAt: $0.writtenAt)
        }
        databaseBytes = fileBytes(path)
      }
    }

    @Test func setOfUnencodableValueThrowsAndChangesNothing() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let reading = try store.liveData("reading", default: Reading(value: 0))
      try reading.set(Reading(value: 1.5))
      let recorder = DeliveryRecorder<Reading>()
      let observer = reading.observeForever(receiveCurrent: false, recorder.callback)
      defer { observer.cancel() }
      let before = try Snapshot(reading, path: path)
      let walBefore = fileBytes(path + "-wal")

      let error = expectStoreError("encodingFailed") { try reading.set(Reading(value: .nan)) }
      if let error {
        #expect(error.description.contains("reading"), "the error names the key: \(error)")
        #expect(error.description.hasSuffix(".") && !error.description.hasSuffix(".."), "\(error)")
      }

      #expect(try Snapshot(reading, path: path) == before)
      #expect(fileBytes(path + "-wal") == walBefore, "an encoding failure never reaches SQLite")
      recorder.expectNothing("no observer call for a failed set")
      #expect(try store.keys() == ["reading"])

      try reading.set(Reading(value: 2.5))
      #expect(reading.version == 2, "the failed set consumed no version number")
      recorder.expect([Reading(value: 2.5)])
      #expect(try reading.history().map(\.version) == [2, 1])
    }

    @Test func setWhoseEncodeThrowsChangesNothing() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let refusing = try store.liveData("refusing", default: Refusing(refuse: false, payload: 0))
      let recorder = DeliveryRecorder<Refusing>()
      let observer = refusing.observeForever(receiveCurrent: false, recorder.callback)
      defer { observer.cancel() }

      // On a key never written: still nothing, not even the key.
      #expect(throws: (any Error).self) { try refusing.set(Refusing(refuse: true, payload: 1)) }
      #expect(refusing.version == 0)
      #expect(refusing.value == Refusing(refuse: false, payload: 0))
      #expect(try store.keys().isEmpty)

      try refusing.set(Refusing(refuse: false, payload: 1))
      let before = try Snapshot(refusing, path: path)
      #expect(throws: (any Error).self) { try refusing.set(Refusing(refuse: true, payload: 2)) }
      #expect(try Snapshot(refusing, path: path) == before)
      recorder.expect([Refusing(refuse: false, payload: 1)])

      try refusing.set(Refusing(refuse: false, payload: 3))
      #expect(refusing.version == 2)
      recorder.expect([Refusing(refuse: false, payload: 3)])
    }

    @Test func updateWhoseTransformThrowsChangesNothing() throws {
      struct Refused: Error {}
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let count = try store.liveData("count", default: 0)
      try count.set(1)
      let recorder = DeliveryRecorder<Int>()
      let observer = count.observeForever(receiveCurrent: false, recorder.callback)
      defer { observer.cancel() }
      let before = try Snapshot(count, path: path)

      #expect(throws: Refused.self) {
        try count.update { value in
          value += 100
          throw Refused()
        }
      }
      #expect(try Snapshot(count, path: path) == before)
      recorder.expectNothing()

      try count.update { $0 += 1 }
      #expect(count.value == 2)
      #expect(count.version == 2)
      recorder.expect([2])
    }

    @Test func updateProducingUnencodableValueChangesNothing() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let reading = try store.liveData("reading", default: Reading(value: 1))
      try reading.set(Reading(value: 2))
      let before = try Snapshot(reading, path: path)
      expectStoreError("encodingFailed") { try reading.update { $0.value = .infinity } }
      #expect(try Snapshot(reading, path: path) == before)
      try reading.update { $0.value += 1 }
      #expect(reading.value == Reading(value: 3))
      #expect(reading.version == 2)
    }

    @Test(.enabled(if: isRoot, "mounting a small tmpfs needs root"))
    func setOnFullDiskThrowsDiskFullChangesNothingAndWorksOnceSpaceIsFreed() throws {
      let fileSystem: SmallFileSystem
      do {
        fileSystem = try SmallFileSystem(size: "2m")
      } catch {
        try Test.cancel("cannot mount a tmpfs here: \(error)")
      }
      defer { fileSystem.unmount() }
      let path = "\(fileSystem.path)/store.db"
      let large = String(repeating: "x", count: 400_000)
      do {
        let store = try PersistentStore(path: path)
        defer { try? store.close() }
        let blob = try store.liveData("blob", default: "")
        try blob.set("small")
        let recorder = DeliveryRecorder<String>()
        let observer = blob.observeForever(receiveCurrent: false, recorder.callback)
        defer { observer.cancel() }
        let before = try Snapshot(blob, path: path)
        let filler = try fileSystem.fill()

        for attempt in 1...2 {
          let error = expectStoreError("diskFull", "attempt \(attempt)") { try blob.set(large) }
          if let error {
            #expect(error.description.contains("store.db"), "the error names the file: \(error)")
          }
          #expect(try Snapshot(blob, path: path) == before, "attempt \(attempt) changed something")
          recorder.expectNothing("no observer call for a failed set")
        }

        try fileSystem.remove(filler, waitingUntilFree: 800_000)
        try blob.set(large)
        #expect(blob.version == 2, "the failed sets consumed no version number")
        #expect(blob.value == large)
        recorder.expect([large])
        #expect(try blob.history().map(\.version) == [2, 1])
      }

      let reopened = try PersistentStore(path: path)
      defer { try? reopened.close() }
      let blob = try reopened.liveData("blob", default: "")
      #expect(blob.version == 2)
      #expect(blob.value == large)
      #expect(try blob.history().map(\.version) == [2, 1])
      #expect(try blob.value(at: 1) == "small")
    }

    /// `chattr +i` on the database and its WAL while the store is open. (Not on the `-shm` file: SQLite
    /// maps it into memory, and a write to an immutable mapping kills the process with SIGBUS.)
    @Test(.enabled(if: isRoot && chattrIsAvailable, "chattr +i needs root"))
    func setOnImmutableFileThrowsReadOnlyChangesNothingAndWorksOnceWritable() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let files = [path, path + "-wal"]
      do {
        let store = try PersistentStore(path: path)
        defer { try? store.close() }
        let note = try store.liveData("note", default: "")
        try note.set("before")
        let recorder = DeliveryRecorder<String>()
        let observer = note.observeForever(receiveCurrent: false, recorder.callback)
        defer { observer.cancel() }
        let before = try Snapshot(note, path: path)

        try setImmutable(true, files)
        do {
          defer { try? setImmutable(false, files) }
          // An immutable file is a read-only file: the documented error is readOnly, not an I/O error.
          let error = expectStoreError("readOnly") { try note.set("during") }
          if let error {
            #expect(error.description.contains("store.db"), "the error names the file: \(error)")
          }
          #expect(note.value == "before")
          #expect(note.version == 1)
          recorder.expectNothing("no observer call for a failed set")
        }
        #expect(try Snapshot(note, path: path) == before)

        try note.set("after")
        #expect(note.version == 2, "the failed set consumed no version number")
        recorder.expect(["after"])
      }
      let reopened = try PersistentStore(path: path)
      let note = try reopened.liveData("note", default: "")
      #expect(note.version == 2)
      #expect(try note.history().map(\.value) == ["after", "before"])
    }

    /// A store opened on an immutable file either refuses to open with `readOnly` or opens and refuses
    /// writes with `readOnly`; either way the file is unchanged and writes work again once it is writable.
    @Test(.enabled(if: isRoot && chattrIsAvailable, "chattr +i needs root"))
    func storeOnImmutableFileRefusesWritesWithReadOnly() throws {
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try store.liveData("note", default: "").set("kept")
        try store.close()
      }
      let bytesBefore = fileBytes(path)
      try setImmutable(true, [path])
      do {
        defer { try? setImmutable(false, [path]) }
        do {
          let store = try PersistentStore(path: path)
          defer { try? store.close() }
          let note = try store.liveData("note", default: "")
          #expect(note.value == "kept")
          expectStoreError("readOnly") { try note.set("refused") }
          #expect(note.version == 1)
          #expect(note.value == "kept")
        } catch let error as PersistentLiveDataError {
          #expect(error.caseName == "readOnly", "refused at open with the wrong error: \(error)")
        }
      }
      #expect(fileBytes(path) == bytesBefore)

      let store = try PersistentStore(path: path)
      let note = try store.liveData("note", default: "")
      try note.set("written")
      #expect(note.version == 2)
      #expect(try note.history().map(\.value) == ["written", "kept"])
    }
  }
}

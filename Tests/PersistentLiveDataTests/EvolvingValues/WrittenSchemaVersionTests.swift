import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

/// A type whose `writtenSchemaVersion` is out of range: clamped into `1 ... schemaVersion`.
struct ProfileWrittenTooHigh: PersistentValue, Equatable {
  static let schemaVersion = 2
  static let writtenSchemaVersion = 7
  var name: String
}

extension ValueSchemas {
  /// Expand then contract (README, the compatibility promise): a type can read a new schema before any build
  /// writes it. Every write path records `writtenSchemaVersion` with the form `encode(to:schemaVersion:)`
  /// gives, so a build that knows only schema 1 reads everything the expand release wrote.
  @Suite struct WrittenSchemaVersionTests {
    static let blank = ProfileReads2Writes1(name: "", email: "")

    @Test func everyWritePathOfTheExpandReleaseWritesTheOldFormAndTheOldBuildReadsIt() async throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let profile = try store.liveData("profile", default: Self.blank)
      try profile.set(.init(name: "ada", email: "ada@example.com"))  // 1: set
      #expect(profile.value.email == "ada@example.com", "memory keeps what was set")
      try profile.update { $0.name = "ada l." }  // 2: update
      try profile.set(.init(name: "grace", email: "g@example.com"), ifVersion: 2)  // 3: conditional
      try await profile.write(.init(name: "edsger", email: "e@example.com"))  // 4: group commit
      try store.transaction { try profile.set(.init(name: "barbara", email: "b@example.com")) }  // 5
      try profile.rollback(to: 1)  // 6: rollback
      try profile.reset()  // 7: the default
      let members = try store.collection("people", of: ProfileReads2Writes1.self)
      try members.set(.init(name: "alan", email: "a@example.com"), for: "1")
      try members.update("2", default: Self.blank) { $0.name = "kurt" }
      try store.transaction { try members.set(.init(name: "john", email: "j@example.com"), for: "3") }

      #expect(try storedSchemaVersions(path, key: "profile") == Array(repeating: 1, count: 7))
      for id in ["1", "2", "3"] { #expect(try storedSchemaVersions(path, key: "people/\(id)") == [1]) }
      let payloads = try SQLiteCLI.query(
        path, "SELECT payload FROM pld_values WHERE key = 'profile' ORDER BY version"
      ).split(separator: "\n")
      #expect(payloads.first == #"{"name":"ada"}"#, "the schema-1 form: \(payloads)")
      #expect(payloads.allSatisfy { !$0.contains("email") }, "no schema-2 field stored: \(payloads)")
      try store.close()

      // The build before the change reads every version, none too new.
      let old = try PersistentStore(path: path)
      let oldProfile = try old.liveData("profile", default: ProfileV1(name: ""))
      #expect(oldProfile.version == 7)
      #expect(
        try oldProfile.history().map(\.value.name) == [
          "", "ada", "barbara", "edsger", "grace", "ada l.", "ada",
        ])
      let oldMembers = try old.collection("people", of: ProfileV1.self)
      #expect(oldMembers.value.mapValues(\.name) == ["1": "alan", "2": "kurt", "3": "john"])
      try oldProfile.set(ProfileV1(name: "from the old build"))
      try old.close()

      // The contract release writes schema 2 and reads both; then the old build meets a newer schema.
      let new = try PersistentStore(path: path)
      let newProfile = try new.liveData("profile", default: ProfileWrites2(name: "", email: ""))
      #expect(newProfile.value == ProfileWrites2(name: "from the old build", email: ""))
      try newProfile.set(.init(name: "ada", email: "ada@example.com"))
      #expect(try storedSchemaVersions(path, key: "profile").last == 2)
      try new.close()
      var throwing = StoreOptions()
      throwing.onUndecodable = .throwError
      let oldAgain = try PersistentStore(path: path, options: throwing)
      #expect {
        _ = try oldAgain.liveData("profile", default: ProfileV1(name: ""))
      } throws: { error in
        guard case PersistentLiveDataError.valueSchemaTooNew(_, 9, 2, 1) = error else { return false }
        return true
      }
      try oldAgain.close()
    }

    @Test func aRollbackOfTheExpandReleaseRewritesANewerRowInTheOldForm() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let new = try PersistentStore(path: path)
      let written2 = try new.liveData("profile", default: ProfileWrites2(name: "", email: ""))
      try written2.set(.init(name: "ada", email: "ada@example.com"))  // 1, schema 2
      try written2.set(.init(name: "grace", email: "g@example.com"))  // 2, schema 2
      try new.close()
      let expand = try PersistentStore(path: path)
      let profile = try expand.liveData("profile", default: Self.blank)
      #expect(profile.value == .init(name: "grace", email: "g@example.com"), "reads schema 2")
      try profile.rollback(to: 1)
      #expect(profile.value == .init(name: "ada", email: "ada@example.com"))
      #expect(try storedSchemaVersions(path, key: "profile") == [2, 2, 1], "written in the old form")
      try expand.close()
    }

    @Test func aWrittenSchemaVersionOutOfRangeIsClamped() throws {
      guard SQLiteCLI.isAvailable else { return }
      let folder = try TemporaryDirectory()
      let path = folder.path("store.db")
      let store = try PersistentStore(path: path)
      let value = try store.liveData("v", default: ProfileWrittenTooHigh(name: ""))
      try value.set(.init(name: "x"))
      #expect(try storedSchemaVersions(path, key: "v") == [2])
      #expect(ProfileV1.writtenSchemaVersion == 1 && ProfileWrites2.writtenSchemaVersion == 2, "the defaults")
      try store.close()
    }
  }
}

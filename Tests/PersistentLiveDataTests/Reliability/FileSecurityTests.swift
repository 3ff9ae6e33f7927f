import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

extension Reliability.Timed {
  /// What a store leaves on disk for someone who reads the files: deleted secrets (with
  /// `StoreOptions.secureDelete`), and nothing written through a planted symbolic link. File modes (0600,
  /// folders 0700) and a database path that is a link are covered by Store/StoreFileTests.
  @Suite struct FileSecurityTests {
    /// Writes a secret, replaces it, prunes it away and checkpoints with TRUNCATE; returns whether the
    /// secret's bytes are still anywhere in the database file or its WAL.
    func secretSurvivesPruning(
      secureDelete: Bool, forceOff: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Bool {
      let folder = try TemporaryDirectory("secure")
      let path = folder.path("store.db")
      let secret = "secret-\(UUID().uuidString)"
      var options = StoreOptions()
      options.externalChangePollInterval = nil
      options.secureDelete = secureDelete
      let store = try PersistentStore(path: path, options: options)
      if forceOff {
        _ = try store.database.withConnection { connection, _ in
          try connection.setPragma("secure_delete", "OFF")
        }
      }
      let token = try store.liveData("token", default: "")
      try token.set(secret)
      for round in 1...3 { try token.set("replacement \(round)") }
      #expect(try store.prune(key: "token", keep: 1).deleted == 3, sourceLocation: sourceLocation)
      _ = try store.database.withConnection { connection, _ in try connection.walCheckpoint(.truncate) }
      let found = [path, path + "-wal"].contains { file in
        fileBytes(file)?.range(of: Data(secret.utf8)) != nil
      }
      try store.close()
      return found
    }

    /// What `PRAGMA secure_delete` a fresh connection of this SQLite build starts with.
    static var buildDefaultIsOn: Bool {
      (try? SQLiteConnection.inMemory().pragmaInt("secure_delete")) == 1
    }

    @Test func secureDeleteLeavesNoTraceOfAPrunedValueAfterACheckpoint() throws {
      #expect(try !secretSurvivesPruning(secureDelete: true), "the pruned secret is still in the file")
    }

    /// The control: with secure_delete off, the same scan finds the pruned secret — so the test above can
    /// fail. (Debian's libsqlite3 is built with SQLITE_SECURE_DELETE, so "off" is forced here.)
    @Test func withoutSecureDeleteThePrunedValueIsStillInTheFile() throws {
      #expect(try secretSurvivesPruning(secureDelete: false, forceOff: true))
    }

    /// The default (`secureDelete: false`) keeps SQLite's build default, whatever it is.
    @Test func defaultFollowsTheSQLiteBuild() throws {
      let found = try secretSurvivesPruning(secureDelete: false)
      #expect(found == !Self.buildDefaultIsOn, "build default on: \(Self.buildDefaultIsOn)")
      Reliability.figure(
        "secure-delete buildDefault=\(Self.buildDefaultIsOn ? "on" : "off") prunedSecretFoundWithoutOption=\(found)"
      )
    }

    /// A `-wal` planted as a symbolic link next to an existing store: the store must not write through it.
    @Test func walPlantedAsASymbolicLinkIsNotWrittenThrough() throws {
      let folder = try TemporaryDirectory("symlink-wal")
      let path = folder.path("store.db")
      do {
        let store = try PersistentStore(path: path)
        try store.liveData("value", default: 0).set(1)
        try store.close()
      }
      #expect(!fileExists(path + "-wal"), "a cleanly closed store leaves no WAL")
      let victim = folder.path("victim.txt")
      try writeFile(victim, Data("do not touch\n".utf8))
      try FileManager.default.createSymbolicLink(atPath: path + "-wal", withDestinationPath: victim)

      let outcome = Result { () throws -> Int64 in
        let store = try PersistentStore(path: path)
        defer { try? store.close() }
        let value = try store.liveData("value", default: 0)
        try value.set(2)
        return value.version
      }
      #expect(
        fileBytes(victim) == Data("do not touch\n".utf8), "the store wrote through the link: \(outcome)")
      // The store refuses a -wal that is a link, naming it.
      #expect(throws: PersistentLiveDataError.symbolicLink(path: path + "-wal")) { try outcome.get() }
      Reliability.figure("symlinked-wal outcome=\(outcome)")
    }
  }
}

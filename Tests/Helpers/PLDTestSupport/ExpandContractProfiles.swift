import PersistentLiveData
import Testing

/// Three releases of one value type, for the tests of expand-then-contract (the README's compatibility
/// promise) on both stores.
///
/// ```swift
/// let profile = try store.liveData("profile", default: ProfileReads2Writes1(name: "", email: ""))
/// ```

/// Schema 1 of a profile, as the build before the change knows it.
package struct ProfileV1: PersistentValue, Equatable {
  package var name: String

  package init(name: String) { self.name = name }
}

/// The expand release: reads schema 2 (with `email`), still writes schema 1.
package struct ProfileReads2Writes1: PersistentValue, Equatable {
  package static let schemaVersion = 2
  package static let writtenSchemaVersion = 1
  package var name: String
  package var email: String

  package init(name: String, email: String) {
    self.name = name
    self.email = email
  }

  package init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    self.init(name: try ProfileV1(from: decoder).name, email: "")
  }

  package func encode(to encoder: any Encoder, schemaVersion: Int) throws {
    #expect(schemaVersion == 1, "asked for the written schema")
    try ProfileV1(name: name).encode(to: encoder)
  }
}

/// The contract release: reads and writes schema 2.
package struct ProfileWrites2: PersistentValue, Equatable {
  package static let schemaVersion = 2
  package var name: String
  package var email: String

  package init(name: String, email: String) {
    self.name = name
    self.email = email
  }

  package init(from decoder: any Decoder, storedSchemaVersion: Int) throws {
    self.init(name: try ProfileV1(from: decoder).name, email: "")
  }
}

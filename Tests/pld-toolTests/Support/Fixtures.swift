import Foundation
import PLDTestSupport
import PersistentLiveData

/// A value type an application would store.
struct Settings: Codable, Sendable, Equatable {
  var theme: String
  var fontSize: Int
  var tags: [String]
}

extension TemporaryDirectory {
  /// Creates a store `name` through the library, runs `body` with it, closes it, returns its path.
  @discardableResult
  func makeStore(
    _ name: String = "app.db", options: StoreOptions = StoreOptions(),
    _ body: (PersistentStore) throws -> Void = { _ in }
  ) throws -> String {
    let path = path(name)
    let store = try PersistentStore(path: path, options: options)
    try body(store)
    try store.close()
    return path
  }

  /// A store with `settings` at versions 1…3, `counter` at 1…5 and `theme` at 1, as apps write them.
  @discardableResult
  func makeSampleStore(_ name: String = "app.db") throws -> String {
    try makeStore(name) { store in
      let settings = try store.liveData("settings", default: Settings(theme: "light", fontSize: 12, tags: []))
      try settings.set(Settings(theme: "light", fontSize: 12, tags: ["a"]))
      try settings.set(Settings(theme: "dark", fontSize: 12, tags: ["a", "b"]))
      try settings.set(Settings(theme: "dark", fontSize: 14, tags: ["b"]))
      let counter = try store.liveData("counter", default: 0)
      for _ in 0..<5 { try counter.update { $0 += 1 } }
      try store.liveData("theme", default: "").set("solarized")
    }
  }
}

/// Milliseconds since 1970 of a library `Date`, as stored.
func milliseconds(_ date: Date) -> Int64 {
  Int64((date.timeIntervalSince1970 * 1000).rounded())
}

/// The ISO 8601 text pld-tool prints for a library `Date`.
func iso8601(_ date: Date) -> String {
  let formatter = ISO8601DateFormatter()
  formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
  formatter.timeZone = TimeZone(identifier: "UTC")
  return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds(date)) / 1000))
}

/// Decodes a JSON fragment (an object of `--json` output's `value`) as `T`.
func decode<T: Decodable>(_ type: T.Type, from jsonObject: Any) throws -> T {
  let data = try JSONSerialization.data(withJSONObject: jsonObject, options: [.fragmentsAllowed])
  return try JSONDecoder().decode(T.self, from: data)
}

import Foundation
import PLDTestSupport
import Testing

@testable import PersistentLiveData
@testable import pld_tool

/// A value written by `pld-tool` is stored in the bytes an app's `set` of an equal value stores: object
/// keys in `JSONEncoder`'s `.sortedKeys` order, which on Linux differs from `JSONSerialization`'s.
@Suite(.ownThread) struct CanonicalJSONTests {
  @Test func setStoresTheBytesTheLibrarysEncoderWrites() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("app.db")
    let value = ["f100": 1, "f20": 2, "f10": 3, "B": 4, "a": 5, "é": 6, "A": 7, "_": 8, "a1": 9]
    do {
      let store = try PersistentStore(path: path)
      try store.liveData("library", default: [String: Int]()).set(value)
      try store.close()
    }
    let flat = #"{"f100":1,"f20":2,"f10":3,"B":4,"a":5,"é":6,"A":7,"_":8,"a1":9}"#
    let nested = #"{"b":{"z":[{"y":1,"x":2}],"/":"a/b"},"a":true}"#
    #expect(runInProcess(["set", path, "flat", flat]).status == 0)
    #expect(runInProcess(["set", path, "nested", nested]).status == 0)
    let connection = try SQLiteConnection(path: path, mode: .readOnly)
    defer { connection.close() }
    func stored(_ key: String) throws -> String? {
      try connection.scalarText("SELECT payload FROM pld_values WHERE key = '\(key)'")
    }
    #expect(try stored("flat") == (try stored("library")), "the same bytes as the app's JSONEncoder")
    #expect(try stored("flat") == #"{"A":7,"B":4,"_":8,"a":5,"a1":9,"f10":3,"f100":1,"f20":2,"é":6}"#)
    #expect(try stored("nested") == #"{"a":true,"b":{"/":"a/b","z":[{"x":2,"y":1}]}}"#)
  }
}

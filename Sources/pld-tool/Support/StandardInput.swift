import Foundation

/// Reading standard input.
enum StandardInput {
  /// Everything on standard input, as UTF-8 text.
  static func readAll() throws -> String {
    String(decoding: try readData(), as: UTF8.self)
  }

  /// Everything on standard input, as bytes.
  static func readData() throws -> Data {
    try FileHandle.standardInput.readToEnd() ?? Data()
  }
}

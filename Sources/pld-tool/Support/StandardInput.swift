import Foundation

/// Reading standard input.
enum StandardInput {
  /// Everything on standard input, as UTF-8 text.
  static func readAll() throws -> String {
    let data = try FileHandle.standardInput.readToEnd() ?? Data()
    return String(decoding: data, as: UTF8.self)
  }
}

import ArgumentParser
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--author` and `--reason`, for the commands that write (`set`, `rollback`, `delete`, `import`): the
/// ``WriteAttribution`` recorded with what they write.
struct AttributionOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "Who makes the change, recorded with it (at most 256 bytes of UTF-8; default: your login name).",
      valueName: "name"))
  var author: String?

  @Option(
    help: ArgumentHelp("Why, recorded with the change (at most 4,096 bytes of UTF-8).", valueName: "text"))
  var reason: String?

  func validate() throws {
    do {
      try attribution.validate()
    } catch let error as WriteAttributionTooLong {
      throw ValidationError(
        "--\(error.field.name) is \(error.byteCount) bytes of UTF-8; the limit is \(error.limit) bytes.")
    }
  }

  /// What the command records: the options, the author defaulting to the login name.
  var attribution: WriteAttribution {
    WriteAttribution(author: author ?? Self.loginName, reason: reason)
  }

  /// Runs `body` with ``attribution`` in effect for every write it makes.
  func recording<T>(_ body: () throws -> T) rethrows -> T {
    try WriteAttribution.$current.withValue(attribution, operation: body)
  }

  /// The login name: `LOGNAME` (POSIX's login name variable), else the user database's name of the real
  /// user id; nil when neither is known. Nothing is printed on the way (`getlogin` needs a terminal).
  static var loginName: String? {
    if let name = getenv("LOGNAME").map({ String(cString: $0) }), !name.isEmpty { return name }
    guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return nil }
    let text = String(cString: name)
    return text.isEmpty ? nil : text
  }
}

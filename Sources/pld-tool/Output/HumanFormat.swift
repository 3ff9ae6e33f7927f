import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sizes and times as people read them, and times as scripts read them.
enum HumanFormat {
  /// `512 B`, `1.2 KB`, `3.4 MB`, `1.0 GB` (decimal units, as file managers show them).
  static func size(_ bytes: Int64) -> String {
    if bytes < 1_000 { return "\(bytes) B" }
    let units = ["KB", "MB", "GB", "TB", "PB"]
    var value = Double(bytes) / 1_000
    var unit = 0
    while value >= 999.95, unit < units.count - 1 {
      value /= 1_000
      unit += 1
    }
    return String(format: "%.1f", value) + " " + units[unit]
  }

  /// ``size(_:)`` of an `Int`.
  static func size(_ bytes: Int) -> String { size(Int64(bytes)) }

  /// A stored time (milliseconds since 1970) in local time: `2025-11-21 07:21:30`.
  static func localTime(milliseconds: Int64) -> String {
    var seconds = time_t(floorDivide(milliseconds, 1_000))
    var parts = tm()
    localtime_r(&seconds, &parts)
    return dateTime(parts, separator: " ")
  }

  /// A stored time in local time with milliseconds: `2025-11-21 07:21:30.123`.
  static func preciseLocalTime(milliseconds: Int64) -> String {
    localTime(milliseconds: milliseconds) + "."
      + pad(Int(milliseconds - floorDivide(milliseconds, 1_000) * 1_000), 3)
  }

  /// A stored time in ISO 8601, UTC, with milliseconds: `2025-11-21T06:21:30.123Z`.
  static func iso8601(milliseconds: Int64) -> String {
    var seconds = time_t(floorDivide(milliseconds, 1_000))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    let fraction = Int(milliseconds - floorDivide(milliseconds, 1_000) * 1_000)
    return dateTime(parts, separator: "T") + "." + pad(fraction, 3) + "Z"
  }

  /// The milliseconds since 1970 of a UTC time as ``iso8601(milliseconds:)`` writes it —
  /// `2026-11-25T07:30:05.123Z`, or without the fraction — or nil for any other text.
  static func milliseconds(iso8601 text: String) -> Int64? {
    let utf8 = Array(text.utf8)
    guard utf8.count == 20 || utf8.count == 24, utf8.last == UInt8(ascii: "Z") else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      guard range.allSatisfy({ utf8[$0] >= UInt8(ascii: "0") && utf8[$0] <= UInt8(ascii: "9") }) else {
        return nil
      }
      return range.reduce(0) { $0 * 10 + Int(utf8[$1] - UInt8(ascii: "0")) }
    }
    let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
    guard separators.allSatisfy({ utf8[$0.0] == $0.1.asciiValue }) else { return nil }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    var fraction = 0
    if utf8.count == 24 {
      guard utf8[19] == UInt8(ascii: "."), let digits = number(20..<23) else { return nil }
      fraction = digits
    }
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    let seconds = Int64(timegm(&parts))
    return seconds * 1_000 + Int64(fraction)
  }

  /// How long ago a stored time was: `just now`, `42 s ago`, `5 min ago`, `3 h ago`, `12 days ago`
  /// (`in the future` for a clock that was ahead).
  static func relative(milliseconds: Int64, now: Date = Date()) -> String {
    let elapsed = (now.timeIntervalSince1970 * 1_000 - Double(milliseconds)) / 1_000
    switch elapsed {
    case ..<(-1): return "in the future"
    case ..<1: return "just now"
    case ..<60: return "\(Int(elapsed)) s ago"
    case ..<3_600: return "\(Int(elapsed / 60)) min ago"
    case ..<86_400: return "\(Int(elapsed / 3_600)) h ago"
    case ..<(2 * 86_400): return "1 day ago"
    default: return "\(Int(elapsed / 86_400)) days ago"
    }
  }

  /// `2025-11-21 07:21:30 (5 min ago)`.
  static func timeWithAge(milliseconds: Int64, now: Date = Date()) -> String {
    "\(localTime(milliseconds: milliseconds)) (\(relative(milliseconds: milliseconds, now: now)))"
  }

  /// `1 version`, `3 versions`.
  static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
  }

  private static func dateTime(_ parts: tm, separator: String) -> String {
    pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
      + separator + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":"
      + pad(Int(parts.tm_sec), 2)
  }

  private static func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return value % divisor < 0 ? quotient - 1 : quotient
  }
}

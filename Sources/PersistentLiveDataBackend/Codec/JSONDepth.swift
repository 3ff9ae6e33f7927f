/// How deeply a stored value may nest arrays and objects, and how deep a JSON text nests them.
///
/// A value is stored only if it can be read back: Foundation's `JSONDecoder` (and `JSONSerialization`)
/// refuse a text that nests arrays and objects more than 512 levels deep — `[[1]]` is 2 levels, a
/// scalar 0 — so the store's encoder, `PersistentStore`'s raw-JSON writes and `pld-tool` refuse a value
/// deeper than ``limit`` before writing anything
/// (``PersistentLiveDataError/valueTooDeep(key:depth:)``), and stop there, long before a recursion over a
/// value 100,000 levels deep could exhaust a thread's stack.
///
/// ```swift
/// JSONDepth.deepest(in: Array("[[1], {\"a\": []}]".utf8))   // 2
/// JSONDepth.limit                                          // 512
/// ```
package enum JSONDepth {
  /// The deepest nesting of arrays and objects a stored value may have: 512, the most `JSONDecoder`
  /// reads (measured: 512 nested arrays, objects or both decode; 513 are refused as corrupted data).
  package static let limit = 512

  /// The deepest nesting of arrays and objects in JSON text `bytes`, in one pass without recursion (a
  /// bracket inside a string does not count), so that any text can be measured, however deep. Meant for
  /// valid JSON; of any other text it counts the brackets outside strings all the same.
  package static func deepest(in bytes: some Sequence<UInt8>) -> Int {
    var depth = 0
    var deepest = 0
    var inString = false
    var escaped = false
    for byte in bytes {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""):
        inString = true
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        depth += 1
        deepest = max(deepest, depth)
      case UInt8(ascii: "]"), UInt8(ascii: "}"):
        depth = max(0, depth - 1)
      default:
        break
      }
    }
    return deepest
  }
}

/// Thrown by ``JSONTextEncoder/encode(_:)`` for a value nested deeper than ``JSONDepth/limit``: `depth`
/// is the level of the first array or object past it (the encoder stops there).
struct JSONDepthExceeded: Error, Equatable {
  let depth: Int
}

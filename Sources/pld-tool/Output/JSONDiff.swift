/// What changed between two JSON values, path by path.
///
/// Objects are compared member by member (members of the old value in their order, then new ones),
/// arrays element by element by index; anything else — including a change of kind, such as a number
/// that became a string — is a change of the whole value at that path.
///
/// ```swift
/// JSONDiff.changes(from: old, to: new)
/// // [Change(path: "$.theme", kind: .changed, old: "light", new: "dark"),
/// //  Change(path: "$.items[2]", kind: .added, old: nil, new: {"title":"x"})]
/// ```
enum JSONDiff {
  /// One difference.
  struct Change: Equatable {
    /// `added`, `removed` or `changed`.
    enum Kind: String {
      case added
      case removed
      case changed
    }

    /// A JSONPath: `$`, `$.name`, `$.items[2].title`, `$["a key"]`.
    var path: String
    var kind: Kind
    /// The value before (nil when added).
    var old: JSONValue?
    /// The value after (nil when removed).
    var new: JSONValue?
  }

  /// Every difference from `old` to `new`, in document order.
  static func changes(from old: JSONValue, to new: JSONValue) -> [Change] {
    var changes: [Change] = []
    compare(old, new, path: "$", into: &changes)
    return changes
  }

  private static func compare(_ old: JSONValue, _ new: JSONValue, path: String, into changes: inout [Change])
  {
    switch (old, new) {
    case (.object(let oldMembers), .object(let newMembers)):
      var newByKey: [String: JSONValue] = [:]
      for member in newMembers { newByKey[member.key] = member.value }
      var seen = Swift.Set<String>()
      for member in oldMembers where seen.insert(member.key).inserted {
        let memberPath = path + component(member.key)
        let oldValue = old[member.key] ?? member.value
        if let newValue = newByKey[member.key] {
          compare(oldValue, newValue, path: memberPath, into: &changes)
        } else {
          changes.append(Change(path: memberPath, kind: .removed, old: oldValue, new: nil))
        }
      }
      for member in newMembers where seen.insert(member.key).inserted {
        changes.append(
          Change(path: path + component(member.key), kind: .added, old: nil, new: newByKey[member.key]))
      }
    case (.array(let oldElements), .array(let newElements)):
      for index in 0..<max(oldElements.count, newElements.count) {
        let elementPath = "\(path)[\(index)]"
        switch (index < oldElements.count, index < newElements.count) {
        case (true, true):
          compare(oldElements[index], newElements[index], path: elementPath, into: &changes)
        case (true, false):
          changes.append(Change(path: elementPath, kind: .removed, old: oldElements[index], new: nil))
        default:
          changes.append(Change(path: elementPath, kind: .added, old: nil, new: newElements[index]))
        }
      }
    default:
      if !sameValue(old, new) {
        changes.append(Change(path: path, kind: .changed, old: old, new: new))
      }
    }
  }

  /// Equal scalars; numbers also when their text differs only in form (`1.0` and `1`, `1e2` and `100`).
  private static func sameValue(_ old: JSONValue, _ new: JSONValue) -> Bool {
    if old == new { return true }
    guard case .number(let a) = old, case .number(let b) = new else { return false }
    if let x = Int64(a), let y = Int64(b) { return x == y }
    let isInteger = { (text: String) in !text.contains { ".eE".contains($0) } }
    // Integers beyond Int64 with different digits may map to the same Double: they differ.
    if isInteger(a) && isInteger(b) { return false }
    guard let x = Double(a), let y = Double(b) else { return false }
    return x == y
  }

  /// `.name` for identifier-like keys, `["any key"]` otherwise (JSON-escaped).
  static func component(_ key: String) -> String {
    let isIdentifier =
      !key.isEmpty
      && key.unicodeScalars.enumerated().allSatisfy { offset, scalar in
        scalar == "_" || scalar == "$" || (scalar.isASCII && scalar.properties.isAlphabetic)
          || (offset > 0 && ("0"..."9").contains(scalar))
      }
    return isIdentifier ? "." + key : "[" + JSONValue.quoted(key) + "]"
  }
}

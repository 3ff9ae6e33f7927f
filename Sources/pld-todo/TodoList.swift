import Foundation

/// One item of the list.
struct TodoItem: Codable, Sendable, Equatable {
  var title: String
  var done = false
}

/// The whole list, stored as one versioned value: every change is a new version.
struct TodoList: Codable, Sendable, Equatable {
  var items: [TodoItem] = []

  var summary: String {
    let open = items.filter { !$0.done }.count
    return "\(items.count) item\(items.count == 1 ? "" : "s"), \(open) open"
  }

  func rendered() -> String {
    guard !items.isEmpty else { return "  (empty)" }
    return items.enumerated().map { index, item in
      "  \(index + 1). [\(item.done ? "x" : " ")] \(item.title)"
    }.joined(separator: "\n")
  }
}

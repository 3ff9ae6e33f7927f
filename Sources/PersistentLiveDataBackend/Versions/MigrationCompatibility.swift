/// What a library that does not know a migration may still do with a file or database it was applied to
/// (the README's compatibility promise): recorded with the migration when it is applied, so that an older
/// library can read it.
///
/// A library meeting migrations past what it knows opens the store read-write when every one of them is
/// ``readWrite``, read-only (each write throws, naming the migration) when the worst is ``readOnly``, and
/// refuses it only for ``incompatible``.
///
/// ```swift
/// let worst = MigrationCompatibility.worst(of: unknown.map(\.compatibility))   // .readWrite: open as usual
/// ```
package enum MigrationCompatibility: String, Sendable, Hashable, Comparable, CaseIterable {
  /// Older versions keep reading and writing: an added table, column, index or trigger that they need not
  /// know of.
  case readWrite = "read-write"
  /// Older versions may read, but what they would write could break what the migration added.
  case readOnly = "read-only"
  /// Older versions must not open it at all: stop every replica or process of the older version first.
  case incompatible

  /// The least an older version may do among `marks` (``readWrite`` for none).
  package static func worst(of marks: some Sequence<MigrationCompatibility>) -> MigrationCompatibility {
    marks.max() ?? .readWrite
  }

  private var rank: Int {
    switch self {
    case .readWrite: 0
    case .readOnly: 1
    case .incompatible: 2
    }
  }

  package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

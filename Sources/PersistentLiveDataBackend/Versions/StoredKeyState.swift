package import Foundation

/// What is stored for a key: its newest row, the version its removal took, or nothing. Every backend
/// reads it when it learns that a key changed elsewhere.
///
/// ```swift
/// try await database.latestState(key: key).apply(to: instance, onMainActor: false).notifyObservers()
/// ```
package enum StoredKeyState: Sendable {
  case row(StoredRow)
  case removed(version: Int64)
  case never
}

extension StoredKeyState {
  /// Moves `instance` to this state if it is newer than memory; returns whom to notify.
  package func apply(to instance: any StoredLiveValue, onMainActor: Bool) -> CommitEffect {
    switch self {
    case .row(let row): instance.receive(row, onMainActor: onMainActor)
    case .removed(let version): instance.receiveRemoval(version: version, onMainActor: onMainActor)
    case .never: .none
    }
  }
}

extension StoredKeyState {
  /// The change a collection that holds `key` applies for this state; nil for a key never written.
  package func memberChange(key: String, at removedAt: Date) -> MemberChange? {
    switch self {
    case .row(let row): .written(row, staged: nil)
    case .removed(let version): .removed(key: key, version: version, at: removedAt)
    case .never: nil
    }
  }
}

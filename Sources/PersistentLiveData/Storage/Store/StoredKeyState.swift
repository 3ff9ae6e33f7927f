/// What is stored for a key: its newest row, the version its removal took, or nothing.
enum StoredKeyState {
  case row(StoredRow)
  case removed(version: Int64)
  case never
}

extension StoredKeyState {
  /// Moves `instance` to this state if it is newer than memory; returns whom to notify.
  func apply(to instance: any StoredLiveValue, onMainActor: Bool) -> CommitEffect {
    switch self {
    case .row(let row): instance.receive(row, onMainActor: onMainActor)
    case .removed(let version): instance.receiveRemoval(version: version, onMainActor: onMainActor)
    case .never: .none
    }
  }
}

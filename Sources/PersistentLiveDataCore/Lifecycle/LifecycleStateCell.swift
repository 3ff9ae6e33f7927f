/// The current state of one ``ScopeLifecycle``, in an object of its own.
///
/// LiveData observers bound to the scope hold the cell and read it at every delivery (Android's
/// `shouldBeActive()`), so a value never reaches an observer whose scope has already left
/// ``LifecycleState/active``, whatever order the scope notifies its subscribers and state observers in.
/// Holding the cell rather than the scope keeps the scope free to be released, and reading it costs no
/// reference counting.
@MainActor final class LifecycleStateCell {
  var value: LifecycleState = .initialized

  nonisolated init() {}
}

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

/// A cancellable that counts its cancellations; thread-safe.
final class CountingCancellable: Cancellable {
  private let cancellations = Locked(0)

  var cancelCount: Int { cancellations.withLock { $0 } }
  var isCancelled: Bool { cancelCount > 0 }

  func cancel() { cancellations.withLock { $0 += 1 } }
}

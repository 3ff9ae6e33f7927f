import Synchronization

@testable import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

/// A cancellable that counts its cancellations; thread-safe.
final class CountingCancellable: Cancellable {
  private let cancellations = Mutex(0)

  var cancelCount: Int { cancellations.withLock { $0 } }
  var isCancelled: Bool { cancelCount > 0 }

  func cancel() { cancellations.withLock { $0 += 1 } }
}

/// Whether this test binary runs under ThreadSanitizer (its runtime is linked into the executable).
///
/// On Linux, `Synchronization.Mutex` hands a contended lock over through a futex system call that TSan
/// cannot see, so TSan reports a "Swift access race" inside `withLock` although the accesses are ordered.
/// A 4-thread `Mutex<[Int]>` append loop reproduces it outside this package, always with the right count;
/// uncontended use reports nothing. Heavily contended stress tests are therefore skipped under TSan.
let isRunningUnderThreadSanitizer: Bool = {
  #if canImport(Glibc)
  dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
  #else
  false
  #endif
}()

import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT and SIGTERM into ``Console/requestStop()`` while alive, so that `watch` ends its loop,
/// closes the database and exits 0 instead of being killed.
///
/// The signals are ignored by their default action and delivered through `DispatchSource` signal sources
/// on a background queue; dropping the object restores the default actions.
final class StopSignals {
  private var sources: [any DispatchSourceSignal] = []
  private static let signals: [Int32] = [SIGINT, SIGTERM]

  /// Installs the handlers (for a console that writes to the real standard streams only); `onStop` is
  /// called as well on each signal (`serve` ends its server with it).
  init(console: Console, onStop: @escaping @Sendable () -> Void = {}) {
    guard console.handlesSignals else { return }
    // A parent may have started us with the signals blocked; the handlers must receive them.
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for number in Self.signals { sigaddset(&unblocked, number) }
    pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
    for number in Self.signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler {
        console.requestStop()
        onStop()
      }
      source.resume()
      sources.append(source)
    }
  }

  deinit {
    guard !sources.isEmpty else { return }
    for source in sources { source.cancel() }
    for number in Self.signals { signal(number, SIG_DFL) }
  }
}

import Foundation
import Testing

/// The limit of a test that guards against a deadlock: three minutes, or ten under a sanitizer
/// (`PLD_TESTS_UNDER_SANITIZER`). Alone such a test takes well under a second; in the whole parallel run
/// it waits for a main actor the other suites keep busy, and under ThreadSanitizer that wait alone has
/// reached 280 s (a CI run failed so). A deadlock never finishes, whatever the limit.
let deadlockTimeLimit: TimeLimitTrait.Duration =
  ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] == nil ? .minutes(3) : .minutes(10)

/// How long a test waits for something the main actor delivers: `limit`, or five minutes under a
/// sanitizer, where the other suites have kept the main actor busy for 280 s (see
/// ``deadlockTimeLimit``). Only a failing wait lasts that long.
func mainActorWaitLimit(_ limit: Duration) -> Duration {
  ProcessInfo.processInfo.environment["PLD_TESTS_UNDER_SANITIZER"] == nil ? limit : max(limit, .seconds(300))
}

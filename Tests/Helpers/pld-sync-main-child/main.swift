// A program whose main.swift never awaits — a synchronous main — for the tests of how the main actor
// runs in a command-line program (Tests/…/Documentation/MainActorInProgramsTests.swift).
//
//   pld-sync-main-child sleep-loop      observes on the main actor, writes 1, 2, 3 from a thread, then loops
//                                       with sleep for 0.5 s: prints "value V version N", never "delivered"
//   pld-sync-main-child dispatch-main   the same, then dispatchMain(): prints "delivered 3" and exits
//   pld-sync-main-child run-loop        the same, then RunLoop.main.run(): prints "delivered 3" and exits
//
// Lines are written with write(2), so that none waits in a buffer when the process exits.
import Foundation
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to standard output at once.
func report(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count) }
}

let mode = CommandLine.arguments.dropFirst().first ?? ""
guard ["sleep-loop", "dispatch-main", "run-loop"].contains(mode) else {
  report("usage: pld-sync-main-child sleep-loop|dispatch-main|run-loop")
  exit(2)
}

// Top-level code runs on the main actor.
let data = MutableLiveData(0)
data.observeForever(receiveCurrent: false) { value in
  report("delivered \(value)")
  if value == 3 { exit(0) }
}

// A writer off the main actor: value and version change before each set returns; delivery is scheduled
// on the main actor. A watchdog ends a program whose main actor never runs.
let writer = Thread {
  for next in 1...3 { data.set(next) }
}
writer.start()
let watchdog = Thread {
  sleep(10)
  report("timeout")
  exit(1)
}
watchdog.start()

switch mode {
case "sleep-loop":
  for _ in 0..<5 { usleep(100_000) }
  report("value \(data.value) version \(data.version)")
  exit(0)
case "dispatch-main":
  dispatchMain()
default:
  RunLoop.main.run()
}

// A child process for the multi-process and crash tests. It reports with raw write(2) calls so that
// every line reaches the parent even if the process is killed right after.
//
//   pld-test-child write DB KEY COUNT TOTAL TAG
//       sets COUNT values {tag, seq} on KEY, observing KEY; waits until KEY reaches version TOTAL
//       (other writers included); prints "final VERSION" and "order ok|bad".
//   pld-test-child observe DB KEY VERSION
//       prints "ready", then "seen VERSION" when KEY reaches VERSION by a write of another process.
//   pld-test-child set DB KEY INT
//       sets KEY (an Int) once and prints "ack VERSION".
//   pld-test-child idle DB KEYS SECONDS
//       opens KEYS live values, writes nothing for SECONDS and prints "cpu MICROSECONDS" (user + system).
//   pld-test-child ack-loop DB KEY DURABILITY
//       sets 1, 2, 3 … on KEY forever, printing "ack N" after each set returns (for kill tests).
import Foundation
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

struct Tagged: Codable, Sendable, Equatable {
  var tag: String
  var seq: Int
}

func report(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
  report("error \(message)")
  exit(2)
}

@MainActor
final class Recorder {
  var seen: [Tagged] = []
  var isOrdered: Bool {
    var lastSeq: [String: Int] = [:]
    for value in seen {
      if let last = lastSeq[value.tag], value.seq <= last { return false }
      lastSeq[value.tag] = value.seq
    }
    return true
  }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage") }
let mode = arguments[1]
let path = arguments[2]
let key = arguments[3]

do {
  switch mode {
  case "write":
    guard arguments.count == 7, let count = Int(arguments[4]), let total = Int64(arguments[5]) else {
      fail("usage: write DB KEY COUNT TOTAL TAG")
    }
    let tag = arguments[6]
    let store = try PersistentStore(path: path)
    let data = try store.liveData(key, default: Tagged(tag: "", seq: 0))
    let recorder = Recorder()
    data.observeForever(receiveCurrent: false) { recorder.seen.append($0) }
    for seq in 1...count {
      try data.set(Tagged(tag: tag, seq: seq))
      if seq % 50 == 0 { try await Task.sleep(for: .milliseconds(1)) }
    }
    let deadline = ContinuousClock.now + .seconds(20)
    while data.version < total, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    try await Task.sleep(for: .milliseconds(100))
    report("final \(data.version)")
    report("order \(recorder.isOrdered ? "ok" : "bad") seen \(recorder.seen.count)")
    try store.close()
  case "observe":
    guard arguments.count == 5, let target = Int64(arguments[4]) else { fail("usage: observe DB KEY VERSION") }
    let store = try PersistentStore(path: path)
    let data = try store.liveData(key, default: Tagged(tag: "", seq: 0))
    let reached = SingleEvent<Int64>()
    data.observeForever { _ in
      if data.version >= target { reached.trigger(data.version) }
    }
    report("ready")
    let deadline = ContinuousClock.now + .seconds(20)
    while !reached.isTriggered, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(2))
    }
    report(reached.isTriggered ? "seen \(data.version)" : "timeout \(data.version)")
  case "set":
    guard arguments.count == 5, let number = Int(arguments[4]) else { fail("usage: set DB KEY INT") }
    let store = try PersistentStore(path: path)
    let data = try store.liveData(key, default: 0)
    try data.set(number)
    report("ack \(data.version)")
  case "idle":
    guard arguments.count == 5, let keys = Int(key), let seconds = Double(arguments[4]) else {
      fail("usage: idle DB KEYS SECONDS")
    }
    let store = try PersistentStore(path: path)
    let values = try (0..<keys).map { try store.liveData("key-\($0)", default: $0) }
    var before = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &before)
    try await Task.sleep(for: .seconds(seconds))
    var after = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &after)
    func micros(_ time: timeval) -> Int { time.tv_sec * 1_000_000 + Int(time.tv_usec) }
    let used = micros(after.ru_utime) - micros(before.ru_utime) + micros(after.ru_stime) - micros(before.ru_stime)
    report("cpu \(used) keys \(values.count)")
  case "ack-loop":
    let durability: Durability = arguments.count > 4 && arguments[4] == "normal" ? .normal : .full
    let store = try PersistentStore(path: path, options: StoreOptions(durability: durability))
    let data = try store.liveData(key, default: 0)
    var next = Int(data.version) + 1
    while true {
      try data.set(next)
      report("ack \(next)")
      next += 1
    }
  default:
    fail("unknown mode \(mode)")
  }
} catch {
  fail("\(error)")
}

import Foundation
import PersistentLiveData

/// `drill-replica sqlite PATH read|write`: opens a store file as an app of this build does, reads the
/// drill's key and, for `write`, writes its next value. One JSON line says what happened; the exit
/// status is 1 when the library refused.
@MainActor
func runSQLite(path: String, writes: Bool) -> Int32 {
  do {
    let store = try PersistentStore(path: path)
    let live = try store.liveData("drill/file", default: DrillValue(seq: 0, writer: "", at: 0))
    var seq = live.value.seq
    if writes {
      seq += 1
      try live.set(DrillValue(seq: seq, writer: DrillSettings.build, at: Date().timeIntervalSince1970))
    }
    DrillLog.emit("sqlite", ["ok": true, "seq": seq, "version": live.version, "build": DrillSettings.build])
    return 0
  } catch {
    DrillLog.emit("sqlite", ["ok": false, "error": "\(error)", "build": DrillSettings.build])
    return 1
  }
}

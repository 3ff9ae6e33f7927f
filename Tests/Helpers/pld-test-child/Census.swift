import Foundation
import PersistentLiveData

#if canImport(Glibc)
import Glibc
#endif

/// What opening and closing many stores leaves behind in this process, read from /proc: its
/// descriptors, its threads, and the watches of its inotify instance (`/proc/self/fdinfo/FD` lists one
/// `inotify wd:…` line per watch).
enum Census {
  /// Opens `stores` stores (default options: watched) in as many folders under `folder`, each with a
  /// live value, then closes them all.
  ///
  /// - Returns: `inotify INSTANCES WATCHES_OPEN WATCHES_CLOSED fds BEFORE AFTER threads BEFORE AFTER
  ///   added [TARGETS]`, TARGETS naming the descriptors that were not there before. BEFORE is counted
  ///   after a first store was opened and closed (the process's one inotify instance and Dispatch's
  ///   threads exist by then).
  static func run(folder: String, stores count: Int) throws -> String {
    try openAndClose(in: folder + "/warm-up", count: 1)
    usleep(100_000)
    let fdsBefore = Set(descriptors())
    let threadsBefore = threads()
    let watchesOpen = try openAndClose(in: folder, count: count)
    usleep(300_000)  // the IN_IGNORED events of the removed watches are read by then
    // A loaded machine may still be finishing a closed store's background work: give the
    // descriptors up to two seconds to come back before counting them.
    var fdsAfter = Set(descriptors())
    for _ in 0..<20 where fdsAfter.count != fdsBefore.count {
      usleep(100_000)
      fdsAfter = Set(descriptors())
    }
    let instances = inotifyDescriptors()
    let watchesClosed = instances.map(watches).reduce(0, +)
    let added = fdsAfter.subtracting(fdsBefore).sorted().map(target).joined(separator: ",")
    return
      "inotify \(instances.count) \(watchesOpen) \(watchesClosed) fds \(fdsBefore.count) \(fdsAfter.count)"
      + " threads \(threadsBefore) \(threads()) added [\(added)]"
  }

  /// Opens and closes `count` stores; returns the watches counted while they were all open.
  @discardableResult
  private static func openAndClose(in folder: String, count: Int) throws -> Int {
    var options = StoreOptions()
    options.verifiesIntegrityOnOpen = false
    var stores: [PersistentStore] = []
    for index in 0..<count {
      let store = try PersistentStore(path: "\(folder)/store-\(index)/census.db", options: options)
      _ = try store.liveData("key", default: 0)
      stores.append(store)
    }
    let open = inotifyDescriptors().map(watches).reduce(0, +)
    for store in stores { try store.close() }
    return open
  }

  private static func descriptors() -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
  }

  private static func target(_ descriptor: String) -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? "?"
  }

  private static func threads() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
  }

  private static func inotifyDescriptors() -> [String] {
    descriptors().filter { descriptor in
      let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
      return target == "anon_inode:inotify"
    }
  }

  private static func watches(_ descriptor: String) -> Int {
    let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)) ?? ""
    return info.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
  }
}

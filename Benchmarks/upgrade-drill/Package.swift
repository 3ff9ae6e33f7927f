// swift-tools-version:6.1
import PackageDescription

// The upgrade drill's replica (issue 44): one app, built against two versions of the library by the
// `run` script beside this file. A separate package, never a dependency of the library or of CI.
//
// PLD_DRILL_LIBRARY_PATH names the library's checkout to build against (default: this repository).
// PLD_DRILL_OLD_API is set by `run` for a release that predates `PersistentValue.writtenSchemaVersion`:
// the app is then built with the value type's first schema only.
let libraryPath = Context.environment["PLD_DRILL_LIBRARY_PATH"] ?? "../.."
let knowsWrittenSchema = Context.environment["PLD_DRILL_OLD_API"] == nil

let package = Package(
  name: "PersistentLiveDataUpgradeDrill",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "PersistentLiveData", path: libraryPath),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
  ],
  targets: [
    .executableTarget(
      name: "drill-replica",
      dependencies: [
        .product(name: "PersistentLiveDataPostgres", package: "PersistentLiveData"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: knowsWrittenSchema ? [.define("PLD_DRILL_EXPAND_CONTRACT")] : []
    )
  ]
)

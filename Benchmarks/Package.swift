// swift-tools-version:6.1
import PackageDescription

// The benchmark of PersistentLiveData. A separate package so that nothing here (the raw SQLite
// baseline, its system-library target) ever reaches the library's users.
//
// PLD_BENCH_LIBRARY_PATH points the benchmark at another checkout of the library (a baseline to
// compare against); by default it is the package this folder belongs to.
let libraryPath = Context.environment["PLD_BENCH_LIBRARY_PATH"] ?? ".."

let package = Package(
  name: "PersistentLiveDataBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "PersistentLiveData", path: libraryPath),
    // A contender of the set benchmark (issue 7), never a dependency of the library itself. On Linux it
    // links the system libsqlite3 through its own system-library target (module GRDBSQLite), like
    // the library (PLDSQLite3) and the raw baseline (PLDBenchSQLite3): one SQLite in the process.
    .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    // The metrics group (issue 31): a real metrics backend, without SwiftNIO.
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
  ],
  targets: [
    // The system libsqlite3 for the raw baseline, under a module name no other package uses.
    .systemLibrary(
      name: "PLDBenchSQLite3",
      path: "Sources/BenchSQLite3",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    .executableTarget(
      name: "pld-bench",
      dependencies: [
        "PLDBenchSQLite3",
        .product(name: "PersistentLiveData", package: "PersistentLiveData"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
      ],
      swiftSettings: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
      ]
    ),
    // The shared store against raw postgres-nio. A target of its own so that `pld-bench` (what CI runs)
    // never builds SwiftNIO.
    .executableTarget(
      name: "pld-bench-postgres",
      dependencies: [
        .product(name: "PersistentLiveDataPostgres", package: "PersistentLiveData"),
        .product(name: "PersistentLiveDataPostgresTesting", package: "PersistentLiveData"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      swiftSettings: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
      ]
    ),
  ]
)

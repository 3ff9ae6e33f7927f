// swift-tools-version:6.1
import PackageDescription

/// Upcoming language features every target opts into.
let swiftSettings: [SwiftSetting] = [
  "ExistentialAny",
  "MemberImportVisibility",
  "InternalImportsByDefault",
].map { .enableUpcomingFeature($0) }

let package = Package(
  name: "PersistentLiveData",
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "PersistentLiveData", targets: ["PersistentLiveData"]),
    // Lifecycle-bound observation alone (LiveData, lifecycles, cancellation): no SQLite, no metrics.
    .library(name: "PersistentLiveDataCore", targets: ["PersistentLiveDataCore"]),
    .library(name: "PersistentLiveDataTesting", targets: ["PersistentLiveDataTesting"]),
    // Shared stores on PostgreSQL. Only apps that use this product build postgres-nio and SwiftNIO.
    .library(name: "PersistentLiveDataPostgres", targets: ["PersistentLiveDataPostgres"]),
    // A throwaway PostgreSQL server for tests, started from the local installation.
    .library(name: "PersistentLiveDataPostgresTesting", targets: ["PersistentLiveDataPostgresTesting"]),
    .executable(name: "pld-tool", targets: ["pld-tool"]),
    .executable(name: "pld-todo", targets: ["pld-todo"]),
    .executable(name: "pld-audit", targets: ["pld-audit"]),
    // The shared-store example: feature flags from PostgreSQL, with Prometheus metrics on /metrics.
    .executable(name: "pld-flags", targets: ["pld-flags"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-crypto", "3.9.0"..<"6.0.0"),
    // Metrics and traces (API packages without SwiftNIO: every product may depend on them).
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    // Only the pld-flags example: a metrics backend.
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    // HTTP servers of executables only (no library product depends on them): the pld-flags example's
    // /metrics and `pld-tool serve`.
    // Without its default traits: swift-configuration (and what it brings) stays out of the build.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
  ],
  targets: [
    // The system libsqlite3. The folder is Sources/CSQLite; the module gets a name no other package uses.
    .systemLibrary(
      name: "PLDSQLite3",
      path: "Sources/CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    // The observation core: lifecycles, cancellation, LiveData. Depends on nothing but the system.
    .target(name: "PersistentLiveDataCore", swiftSettings: swiftSettings),
    // The backend seam: what every store stands on (the base class of a stored value, keys, versions,
    // the value codec, the errors, instrumentation). No SQLite, no PostgreSQL.
    .target(
      name: "PersistentLiveDataBackend",
      dependencies: [
        "PersistentLiveDataCore", .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: swiftSettings
    ),
    // The SQLite store, on the seam; its module re-exports the seam and the core.
    .target(
      name: "PersistentLiveData",
      dependencies: [
        "PersistentLiveDataCore", "PersistentLiveDataBackend", "PLDSQLite3",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ],
      resources: [
        .embedInCode("../../Migrations/0001_initial_schema.sql"),
        .embedInCode("../../Migrations/0002_value_schema_versions.sql"),
        .embedInCode("../../Migrations/0003_removed_keys.sql"),
        .embedInCode("../../Migrations/0004_key_retention.sql"),
        .embedInCode("../../Migrations/0005_store_properties.sql"),
        .embedInCode("../../Migrations/0006_change_log.sql"),
        .embedInCode("../../Migrations/0007_write_attribution.sql"),
        .embedInCode("../../Migrations/0008_collections.sql"),
        .embedInCode("../../Migrations/0009_migration_compatibility.sql"),
      ],
      swiftSettings: swiftSettings
    ),
    // The PostgreSQL backend: the same observation side, versions kept on a server several replicas share.
    .target(
      name: "PersistentLiveDataPostgres",
      dependencies: [
        // The seam; of the SQLite store, only `MirrorFile` for the local cache (.ci/check-layers).
        "PersistentLiveDataBackend", "PersistentLiveData",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ],
      resources: [
        .embedInCode("../../Migrations/postgres/0001_shared_schema.sql"),
        .embedInCode("../../Migrations/postgres/0002_change_feed.sql"),
        .embedInCode("../../Migrations/postgres/0003_write_attribution.sql"),
        .embedInCode("../../Migrations/postgres/0004_collections.sql"),
        .embedInCode("../../Migrations/postgres/0005_migration_compatibility.sql"),
        .embedInCode("../../Migrations/postgres/0006_replicas.sql"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "PersistentLiveDataPostgresTesting",
      dependencies: [.product(name: "PostgresNIO", package: "postgres-nio")],
      swiftSettings: swiftSettings
    ),
    // Helpers for the tests of apps that use the library: a lifecycle owner tests drive.
    .target(
      name: "PersistentLiveDataTesting",
      dependencies: ["PersistentLiveData"],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "pld-tool",
      dependencies: [
        "PersistentLiveData",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        // `pld-tool serve --postgres`; left out with PLD_WITHOUT_POSTGRES=1 (see the end of this file).
        "PersistentLiveDataPostgres",
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      // The inspector's page (`pld-tool serve`), compiled into the tool: nothing is read at run time.
      resources: [
        .embedInCode("Serve/Page/index.html"),
        .embedInCode("Serve/Page/app.css"),
        .embedInCode("Serve/Page/app.js"),
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "pld-todo",
      dependencies: ["PersistentLiveData"],
      swiftSettings: swiftSettings
    ),
    // A long-running example: an audit log of every version of a key, from any process, until SIGTERM.
    .executableTarget(
      name: "pld-audit",
      dependencies: ["PersistentLiveData"],
      swiftSettings: swiftSettings
    ),
    // The shared-store example: a replica that serves feature flags from PostgreSQL and its metrics in
    // Prometheus's format on /metrics. Hummingbird and swift-prometheus stay out of the library products.
    .executableTarget(
      name: "pld-flags",
      dependencies: [
        "PersistentLiveDataPostgres",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "PersistentLiveDataTests",
      dependencies: [
        "PersistentLiveData", "PersistentLiveDataBackend", "PersistentLiveDataTesting", "PLDCrashSim",
        "PLDFuzzHarness", "PLDTestSupport",
        "pld-audit", "pld-sync-main-child", "pld-test-child", "pld-tool", "pld-todo",
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: swiftSettings
    ),
    // Fault injection for the reliability tests: a wrapper around SQLite's "unix" VFS that simulates
    // power loss and I/O errors. Test support only: no product contains it.
    .target(
      name: "PLDCrashSim",
      dependencies: ["PLDSQLite3"],
      path: "Tests/Helpers/PLDCrashSim"
    ),
    // What the test targets share: a fresh temporary directory per test, child processes, a recording
    // log handler. Test support only: no product
    // contains it.
    .target(
      name: "PLDTestSupport",
      dependencies: ["PersistentLiveData", .product(name: "Logging", package: "swift-log")],
      path: "Tests/Helpers/PLDTestSupport",
      swiftSettings: swiftSettings
    ),
    // A small program the tests run as a separate process: concurrent writers, crash targets.
    .executableTarget(
      name: "pld-test-child",
      dependencies: ["PersistentLiveData", "PLDCrashSim", .product(name: "Logging", package: "swift-log")],
      path: "Tests/Helpers/pld-test-child",
      swiftSettings: swiftSettings
    ),
    // A program with a synchronous main.swift: how (and whether) its main actor runs.
    .executableTarget(
      name: "pld-sync-main-child",
      dependencies: ["PersistentLiveData"],
      path: "Tests/Helpers/pld-sync-main-child",
      swiftSettings: swiftSettings
    ),
    // Fuzzing (Fuzz/README.md): libFuzzer entry points, built with --sanitize=fuzzer by .ci/run; without
    // it they are programs that do nothing. The harness is shared with the regression tests.
    .target(
      name: "PLDFuzzHarness",
      dependencies: ["PersistentLiveData"],
      path: "Fuzz/PLDFuzzHarness",
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "pld-fuzz-restore",
      dependencies: ["PLDFuzzHarness"],
      path: "Fuzz/pld-fuzz-restore",
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "pld-fuzz-tool",
      dependencies: ["PLDFuzzHarness"],
      path: "Fuzz/pld-fuzz-tool",
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "PersistentLiveDataPostgresTests",
      dependencies: [
        "PersistentLiveData", "PersistentLiveDataPostgres", "PersistentLiveDataPostgresTesting",
        "PersistentLiveDataTesting", "PLDTestSupport",
        "pld-postgres-child", "pld-flags",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: swiftSettings
    ),
    // A replica in a separate process for the shared-store tests: writes or observes a PostgreSQL store.
    .executableTarget(
      name: "pld-postgres-child",
      dependencies: [
        "PersistentLiveDataPostgres",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      path: "Tests/Helpers/pld-postgres-child",
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "pld-toolTests",
      dependencies: ["pld-tool", "PersistentLiveData", "PLDTestSupport"],
      swiftSettings: swiftSettings
    ),
  ]
)

// PLD_WITHOUT_POSTGRES=1 leaves the PostgreSQL products, their tests and their dependencies out of the
// build: CI's AddressSanitizer pass covers the SQLite side with it, so that SwiftNIO is built under a
// sanitizer once per run rather than twice. Users never need it.
// PLD_LAYER_CHECK=1 builds the PostgreSQL target without the SQLite store's re-export (.ci/check-layers):
// a use of the SQLite store other than its `MirrorFile` seam then fails to compile. Users never need it.
if Context.environment["PLD_LAYER_CHECK"] == "1" {
  for target in package.targets where target.name == "PersistentLiveDataPostgres" {
    target.swiftSettings = (target.swiftSettings ?? []) + [.define("PLD_LAYER_CHECK")]
  }
}

if Context.environment["PLD_WITHOUT_POSTGRES"] == "1" {
  let postgresTargets: Set = [
    "PersistentLiveDataPostgres", "PersistentLiveDataPostgresTesting", "PersistentLiveDataPostgresTests",
    "pld-postgres-child", "pld-flags",
  ]
  package.products.removeAll { postgresTargets.contains($0.name) }
  package.targets.removeAll { postgresTargets.contains($0.name) }
  for target in package.targets where target.name == "pld-tool" {
    target.dependencies.removeAll { dependency in
      ["PersistentLiveDataPostgres", "PostgresNIO"].contains { "\(dependency)".contains($0) }
    }
  }
  package.dependencies.removeAll { dependency in
    // Hummingbird stays: `pld-tool serve` needs it.
    ["postgres-nio", "swift-service-lifecycle", "swift-crypto", "swift-prometheus"].contains {
      "\(dependency.kind)".contains($0)
    }
  }
}

// PLD_SANITIZER_WITHOUT_TOOLS=1 leaves `pld-tool`, `pld-flags`, their tests and the HTTP server and
// command-line packages only they use out of the build: CI's ThreadSanitizer pass builds the libraries
// and their tests with it, and the tests that run `pld-tool` or `pld-flags` as a process run the plain
// build's (PLD_TOOLS_FOLDER). Users never need it.
if Context.environment["PLD_SANITIZER_WITHOUT_TOOLS"] == "1" {
  let tools: Set = ["pld-tool", "pld-toolTests", "pld-flags"]
  package.products.removeAll { tools.contains($0.name) }
  package.targets.removeAll { tools.contains($0.name) }
  for target in package.targets {
    target.dependencies.removeAll { dependency in
      if case .targetItem(let name, _) = dependency { return tools.contains(name) }
      if case .byNameItem(let name, _) = dependency { return tools.contains(name) }
      return false
    }
  }
  package.dependencies.removeAll { dependency in
    ["hummingbird", "swift-argument-parser", "swift-prometheus", "swift-http-types"].contains {
      "\(dependency.kind)".contains($0)
    }
  }
}

// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "hp-sync",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "hp-sync", targets: ["hp-sync"])
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.28.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        // `hp-sync web` only. ConfigurationSupport (swift-configuration) is not used: fewer
        // modules to build.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CHPSyncOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CHPSyncSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Plain value types (keys, items, versions, peers, digests, node IDs) that the store and the
        // wire both speak. It depends on nothing of ours: HPSyncCrypto computes its digests.
        .target(name: "HPSyncModel"),
        .target(
            name: "HPSyncCrypto",
            dependencies: [
                "HPSyncModel",
                "CHPSyncOpenSSL",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HPSyncStore",
            dependencies: [
                "HPSyncModel",
                "HPSyncCrypto",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API (the raw statements of the hot paths, the WAL option GRDB does not
                // set) through this one module, never GRDB's GRDBSQLite beside it.
                "CHPSyncSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The files of other programs and of `export`, above the store: the Homepwner app's
        // Documents folder (archives, plists, Core Data stores read through GRDB) and the JSON and
        // CSV export, read and written through a few store entry points.
        .target(
            name: "HPSyncTransfer",
            dependencies: [
                "HPSyncStore",
                "HPSyncModel",
                "HPSyncCrypto",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "HPSyncProtocol",
            dependencies: [
                "HPSyncModel",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["hpsync.proto"]
        ),
        .target(
            name: "HPSyncEngine",
            dependencies: [
                "HPSyncModel",
                "HPSyncStore",
                "HPSyncProtocol",
                "HPSyncCrypto",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HPSyncWeb",
            dependencies: [
                "HPSyncModel",
                "HPSyncStore",
                "HPSyncCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HPSyncCLI",
            dependencies: [
                "HPSyncEngine",
                "HPSyncWeb",
                "HPSyncProtocol",
                "HPSyncModel",
                "HPSyncStore",
                "HPSyncTransfer",
                "HPSyncCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "hp-sync", dependencies: ["HPSyncCLI"]),
        // Transport throughput benchmark run by Scripts/bench-transport; not a product.
        .executableTarget(
            name: "hp-sync-bench-transport",
            dependencies: [
                "HPSyncCrypto",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the test targets share (the test node, clock, images, a session served over a pipe,
        // child processes), as Hummingbird's HummingbirdTesting. Not a product: only test targets
        // depend on it (the protocol and CLI tests are pure value tests and need none of it).
        .target(
            name: "HPSyncTesting",
            dependencies: [
                "HPSyncEngine", "HPSyncStore", "HPSyncModel", "HPSyncCrypto",
                .product(name: "Logging", package: "swift-log"),
                // ExtremeRecords writes rows past the store's rules, as old rows would be.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/HPSyncTesting"
        ),
        .testTarget(
            name: "HPSyncCryptoTests",
            dependencies: ["HPSyncCrypto", "HPSyncModel", "HPSyncProtocol", "HPSyncTesting"]
        ),
        .testTarget(
            name: "HPSyncStoreTests",
            dependencies: [
                "HPSyncStore",
                "HPSyncModel",
                "HPSyncCrypto",
                "HPSyncTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "HPSyncTransferTests",
            dependencies: [
                "HPSyncTransfer",
                "HPSyncStore",
                "HPSyncModel",
                "HPSyncCrypto",
                "HPSyncTesting",
                // Core Data fixtures (Tests/HPSyncTransferTests/Homepwner) are SQLite files written with GRDB.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "HPSyncProtocolTests",
            dependencies: [
                "HPSyncProtocol", "HPSyncModel", "HPSyncTesting",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .testTarget(
            name: "HPSyncEngineTests",
            dependencies: [
                "HPSyncEngine", "HPSyncStore", "HPSyncModel", "HPSyncProtocol", "HPSyncCrypto", "HPSyncTesting",
                // One property compares two stores through their JSON exports.
                "HPSyncTransfer",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "HPSyncWebTests",
            dependencies: [
                "HPSyncWeb", "HPSyncStore", "HPSyncModel", "HPSyncTesting",
                // One test holds the store's write lock as another process would.
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "HPSyncCLITests",
            dependencies: ["HPSyncCLI", "HPSyncEngine"]
        ),
        .testTarget(
            name: "HPSyncEndToEndTests",
            // The hostile-input suite crafts raw frames with the generated protobuf types; a few
            // tests prepare a store through HPSyncStore for what the CLI cannot make on demand.
            dependencies: [
                "HPSyncCrypto", "HPSyncProtocol", "HPSyncModel", "HPSyncStore", "HPSyncTesting",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

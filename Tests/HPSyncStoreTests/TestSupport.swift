import Foundation
import HPSyncCrypto
import HPSyncModel
import Logging
import Testing

@testable import HPSyncStore

/// A wall clock the test sets, forwards and back.
final class ManualClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    private var now: UInt64

    init(_ now: UInt64 = 1_700_000_000_000) { self.now = now }

    func nowMilliseconds() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return now
    }

    func set(_ value: UInt64) {
        lock.lock()
        now = value
        lock.unlock()
    }
}

/// A temporary directory removed when the test ends.
final class TempDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String, _ bytes: [UInt8]) -> URL {
        let file = url.appendingPathComponent(name)
        try! Data(bytes).write(to: file)
        return file
    }
}

enum Fixtures {
    static let logger = Logger(label: "test")
    static let nodeA = NodeID(certificateDER: Array("node A".utf8))
    static let nodeB = NodeID(certificateDER: Array("node B".utf8))
    static let configuration = StoreConfiguration(sweepAgeSeconds: 0)

    /// A tiny "JPEG": the magic bytes and some junk, enough for the format check.
    static func jpeg(_ seed: UInt8 = 1, count: Int = 64) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0] + (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    static func png(_ seed: UInt8 = 2) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }
    }

    static func ref(_ bytes: [UInt8]) -> ImageRef {
        ImageRef(digest: SHA256.hash(bytes), size: Int64(bytes.count))
    }

    static func makeStore(
        _ dir: TempDirectory, clock: ManualClock = ManualClock(), node: NodeID = nodeA,
        configuration: StoreConfiguration = Fixtures.configuration
    ) throws -> Store {
        try Store.create(
            at: dir.url.appendingPathComponent("store"), nodeID: node, configuration: configuration, clock: clock,
            logger: logger)
    }

    static func reopen(_ store: Store, clock: ManualClock = ManualClock()) throws -> Store {
        try Store.open(at: store.directory, configuration: configuration, clock: clock, logger: logger)
    }

    static func remoteItem(
        _ key: ItemKey, name: String = "remote", stamp: UInt64, origin: NodeID = nodeB, deleted: Bool = false,
        image: ImageRef? = nil
    ) -> Item {
        let version = Version(stamp: VersionStamp(rawValue: stamp), origin: origin)
        if deleted { return Item.tombstone(key: key, version: version) }
        return Item(
            key: key, name: name, valueInDollars: 5, dateCreatedMilliseconds: 1000, image: image, version: version)
    }

    static func imageFiles(_ store: Store) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: store.directory.appendingPathComponent("images").path))?
            .sorted() ?? []
    }

    static func bytes(_ url: URL) -> [UInt8]? {
        (try? Data(contentsOf: url)).map { Array($0) }
    }
}

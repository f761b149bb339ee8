import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import Logging

/// A temporary directory removed when the test ends.
public final class TempDirectory {
    public let url: URL

    public init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    public func file(_ name: String, _ bytes: [UInt8]) -> URL {
        let file = url.appendingPathComponent(name)
        try! Data(bytes).write(to: file)
        return file
    }
}

/// A store and the values the store and transfer tests build on.
public enum Fixtures {
    public static let nodeA = NodeID(certificateDER: Array("node A".utf8))
    public static let nodeB = NodeID(certificateDER: Array("node B".utf8))
    public static let configuration = StoreConfiguration(sweepAgeSeconds: 0)

    public static func png(_ seed: UInt8 = 2) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }
    }

    public static func ref(_ bytes: [UInt8]) -> ImageRef {
        ImageRef(digest: SHA256.hash(bytes), size: Int64(bytes.count))
    }

    public static func makeStore(
        _ dir: TempDirectory, clock: TestClock = TestClock(), node: NodeID = nodeA,
        configuration: StoreConfiguration = Fixtures.configuration
    ) throws -> Store {
        try Store.create(
            at: dir.url.appendingPathComponent("store"), nodeID: node, configuration: configuration, clock: clock,
            logger: quietLogger)
    }

    public static func reopen(_ store: Store, clock: TestClock = TestClock()) throws -> Store {
        try Store.open(at: store.directory, configuration: configuration, clock: clock, logger: quietLogger)
    }

    public static func remoteItem(
        _ key: ItemKey, name: String = "remote", stamp: UInt64, origin: NodeID = nodeB, deleted: Bool = false,
        image: ImageRef? = nil
    ) -> Item {
        let version = Version(stamp: VersionStamp(rawValue: stamp), origin: origin)
        if deleted { return Item.tombstone(key: key, version: version) }
        return Item(
            key: key, name: name, valueInDollars: 5, dateCreatedMilliseconds: 1000, image: image, version: version)
    }

    public static func imageFiles(_ store: Store) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: store.directory.appendingPathComponent("images").path))?
            .sorted() ?? []
    }

    public static func bytes(_ url: URL) -> [UInt8]? {
        (try? Data(contentsOf: url)).map { Array($0) }
    }
}

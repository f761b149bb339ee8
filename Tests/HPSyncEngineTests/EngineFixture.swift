import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import Logging
import Synchronization

@testable import HPSyncEngine

/// A settable clock shared by a test and a store.
final class TestClock: WallClock, @unchecked Sendable {
    private let value: Mutex<UInt64>
    init(_ milliseconds: UInt64 = 1_750_000_000_000) { value = Mutex(milliseconds) }
    func nowMilliseconds() -> UInt64 { value.withLock { $0 } }
    func advance(milliseconds: UInt64) { value.withLock { $0 += milliseconds } }
    func set(_ milliseconds: UInt64) { value.withLock { $0 = milliseconds } }
}

/// A node for engine tests: a real store in a temporary directory with a settable clock.
final class TestNode {
    let name: String
    let directory: URL
    let clock: TestClock
    let store: Store

    /// `base` defaults to the temporary directory; property tests pass a RAM disk to skip fsync costs.
    init(
        _ name: String, clock: TestClock = TestClock(), configuration: StoreConfiguration = .init(), in base: URL? = nil
    ) throws {
        self.name = name
        self.clock = clock
        directory = (base ?? FileManager.default.temporaryDirectory).appendingPathComponent(
            "hp-sync-engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let id = NodeID(certificateDER: Array("\(name)-\(UUID().uuidString)".utf8))
        store = try Store.create(
            at: directory.appendingPathComponent("store"), nodeID: id, configuration: configuration, clock: clock,
            logger: quietLogger)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var nodeID: NodeID { store.nodeID }

    /// Lets `other` pull from (and with read-write, push to) this node.
    func allow(_ other: TestNode, _ permission: PeerPermission = .readWrite) throws {
        try store.addPeer(Peer(name: other.name, nodeID: other.nodeID, permission: permission))
    }

    @discardableResult
    func add(_ name: String, value: Int64 = 1, image: [UInt8]? = nil) throws -> Item {
        var draft = ItemDraft(name: name, valueInDollars: value)
        if let image { draft.imageFile = try writeTemp(image) }
        return try store.add(draft)
    }

    func setImage(_ key: ItemKey, _ bytes: [UInt8]) throws {
        _ = try store.setImage(key, from: try writeTemp(bytes))
    }

    func writeTemp(_ bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent("upload-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url
    }

    /// Everything that must be equal on converged nodes: every key's version and content.
    func snapshot() throws -> [Item] {
        try store.items(includeDeleted: true).sorted { $0.key < $1.key }
    }

    func imageBytes(_ key: ItemKey) -> [UInt8]? {
        (try? Data(contentsOf: store.imageFileURL(for: key))).map { Array($0) }
    }
}

let quietLogger: Logger = {
    var logger = Logger(label: "hp-sync-test")
    logger.logLevel = .critical
    return logger
}()

/// A JPEG-looking image of `size` bytes, distinct per seed.
func jpeg(_ seed: UInt8, size: Int = 3000) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
    var state = UInt32(seed) &* 2_654_435_761 &+ 1
    while bytes.count < size {
        state = state &* 1_103_515_245 &+ 12345
        bytes.append(UInt8(truncatingIfNeeded: state >> 16))
    }
    return bytes
}

enum Sync {
    /// Runs `client` pulling from `server` over an in-memory pipe with the real framing.
    @discardableResult
    static func pull(
        _ client: TestNode, from server: TestNode, dryRun: Bool = false,
        clientStream: ((any ByteStream) -> any ByteStream)? = nil
    ) throws -> SyncReport {
        try session(client, server) { channel in
            var options = SyncClient.Options()
            options.dryRun = dryRun
            return try SyncClient(store: client.store, logger: quietLogger).pull(
                over: channel, serverNodeID: server.nodeID, peerName: server.name, options: options)
        } wrap: {
            clientStream?($0) ?? $0
        }
    }

    @discardableResult
    static func push(_ client: TestNode, to server: TestNode, wrap: ((any ByteStream) -> any ByteStream)? = nil) throws
        -> SyncReport
    {
        try session(client, server) { channel in
            try SyncClient(store: client.store, logger: quietLogger).push(
                over: channel, serverNodeID: server.nodeID, peerName: server.name)
        } wrap: {
            wrap?($0) ?? $0
        }
    }

    static func both(_ a: TestNode, _ b: TestNode) throws {
        try pull(a, from: b)
        try push(a, to: b)
    }

    static func session(
        _ client: TestNode, _ server: TestNode, run: (any MessageChannel) throws -> SyncReport,
        wrap: (any ByteStream) -> any ByteStream
    ) throws -> SyncReport {
        let (clientEnd, serverEnd) = PipeStream.pair()
        let serverStore = server.store
        let clientID = client.nodeID
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            ServerSession(store: serverStore, logger: quietLogger).serve(
                FramedChannel(stream: serverEnd), certificateNodeID: clientID)
            done.signal()
        }
        defer {
            clientEnd.close()
            done.wait()
        }
        return try run(FramedChannel(stream: wrap(clientEnd)))
    }
}

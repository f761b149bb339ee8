import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncModel
import HPSyncStore

/// A node for tests: a real store and TLS identity in a temporary directory, with a settable
/// clock, and (for TLS tests) a `SyncServer` on a loopback port started on demand.
public final class TestNode {
    public let name: String
    public let directory: URL
    public let clock: TestClock
    public let store: Store
    public let identity: NodeIdentity
    private var server: SyncServer?
    private let serverStopped = DispatchSemaphore(value: 0)

    /// `base` defaults to the temporary directory; property tests pass a RAM disk to skip fsync costs.
    public init(
        _ name: String, clock: TestClock = TestClock(), configuration: StoreConfiguration = .init(), in base: URL? = nil
    ) throws {
        self.name = name
        self.clock = clock
        directory = (base ?? FileManager.default.temporaryDirectory).appendingPathComponent(
            "hp-sync-engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let storeDirectory = directory.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        identity = try NodeIdentity.create(in: storeDirectory)
        store = try Store.create(
            at: storeDirectory, nodeID: identity.nodeID, configuration: configuration, clock: clock,
            logger: quietLogger)
    }

    deinit {
        stopServer()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The loopback port of this node's server, started the first time it is asked for.
    public func serverPort() throws -> UInt16 {
        if let server { return server.boundAddresses[0].port }
        return try startServer()
    }

    /// Starts this node's `SyncServer` on a loopback port and returns the port.
    @discardableResult
    public func startServer(timeouts: TLSTimeouts = .init(), limits: ConnectionLimits = .init()) throws -> UInt16 {
        var configuration = SyncServer.Configuration()
        configuration.timeouts = timeouts
        configuration.limits = limits
        configuration.addresses = [("127.0.0.1", 0)]
        configuration.shutdownGrace = .seconds(5)
        let started = try SyncServer(
            store: store, identity: identity, configuration: configuration, logger: quietLogger)
        server = started
        let stopped = serverStopped
        Thread.detachNewThread {
            _ = try? started.run()
            stopped.signal()
        }
        return started.boundAddresses[0].port
    }

    /// Stops this node's server, if it runs, and waits for it.
    public func stopServer() {
        guard let server else { return }
        server.stop()
        serverStopped.wait()
        self.server = nil
    }

    public var nodeID: NodeID { store.nodeID }

    /// Lets `other` pull from (and with read-write, push to) this node.
    public func allow(_ other: TestNode, _ permission: PeerPermission = .readWrite) throws {
        try store.addPeer(Peer(name: other.name, nodeID: other.nodeID, permission: permission))
    }

    @discardableResult
    public func add(_ name: String, value: Int64 = 1, image: [UInt8]? = nil) throws -> Item {
        var draft = ItemDraft(name: name, valueInDollars: value)
        if let image { draft.imageFile = try writeTemp(image) }
        return try store.add(draft)
    }

    public func setImage(_ key: ItemKey, _ bytes: [UInt8]) throws {
        _ = try store.setImage(key, from: try writeTemp(bytes))
    }

    public func writeTemp(_ bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent("upload-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url
    }

    /// Everything that must be equal on converged nodes: every key's version and content.
    public func snapshot() throws -> [Item] {
        try store.items(includeDeleted: true).sorted { $0.key < $1.key }
    }

    public func imageBytes(_ key: ItemKey) -> [UInt8]? {
        (try? Data(contentsOf: store.imageFileURL(for: key))).map { Array($0) }
    }
}

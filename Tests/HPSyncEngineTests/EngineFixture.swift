import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Logging
import Testing

@testable import HPSyncEngine

/// How a test's sessions travel: in-memory pipes, or real TLS 1.3 over loopback TCP.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case pipe, tls
    var testDescription: String { rawValue }
}

/// A node for engine tests: a real store and TLS identity in a temporary directory, with a
/// settable clock, and (for TLS tests) a `SyncServer` on a loopback port started on demand.
final class TestNode {
    let name: String
    let directory: URL
    let clock: TestClock
    let store: Store
    let identity: NodeIdentity
    private var server: SyncServer?
    private let serverStopped = DispatchSemaphore(value: 0)

    /// `base` defaults to the temporary directory; property tests pass a RAM disk to skip fsync costs.
    init(
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
        if let server {
            server.stop()
            serverStopped.wait()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The loopback port of this node's server, started the first time it is asked for.
    func serverPort() throws -> UInt16 {
        if let server { return server.boundAddresses[0].port }
        var configuration = SyncServer.Configuration()
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

enum Sync {
    /// Runs `client` pulling from `server` over an in-memory pipe with the real framing.
    @discardableResult
    static func pull(
        _ client: TestNode, from server: TestNode, dryRun: Bool = false, over transport: Transport = .pipe,
        commitEvery: Int = SinkSession.Batch.entries, clientStream: ((any ByteStream) -> any ByteStream)? = nil
    ) throws -> SyncReport {
        try session(client, server, transport) { channel in
            var options = SyncClient.Options()
            options.dryRun = dryRun
            options.commitEvery = commitEvery
            return try SyncClient(store: client.store, logger: quietLogger).pull(
                over: channel, serverNodeID: server.nodeID, peerName: server.name, options: options)
        } wrap: {
            clientStream?($0) ?? $0
        }
    }

    @discardableResult
    static func push(
        _ client: TestNode, to server: TestNode, dryRun: Bool = false, over transport: Transport = .pipe,
        wrap: ((any ByteStream) -> any ByteStream)? = nil
    ) throws -> SyncReport {
        try session(client, server, transport) { channel in
            var options = SyncClient.Options()
            options.dryRun = dryRun
            return try SyncClient(store: client.store, logger: quietLogger).push(
                over: channel, serverNodeID: server.nodeID, peerName: server.name, options: options)
        } wrap: {
            wrap?($0) ?? $0
        }
    }

    static func both(_ a: TestNode, _ b: TestNode, over transport: Transport = .pipe) throws {
        try pull(a, from: b, over: transport)
        try push(a, to: b, over: transport)
    }

    static func session(
        _ client: TestNode, _ server: TestNode, _ transport: Transport,
        run: (any MessageChannel) throws -> SyncReport, wrap: (any ByteStream) -> any ByteStream
    ) throws -> SyncReport {
        if transport == .tls {
            let connection = try TLSConnection.connect(
                host: "127.0.0.1", port: try server.serverPort(), identity: client.identity,
                expected: .node(server.nodeID), logger: quietLogger)
            return try run(FramedChannel(stream: wrap(connection)))
        }
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

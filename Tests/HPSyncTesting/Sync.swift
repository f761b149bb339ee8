import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncStore

/// How a test's sessions travel: in-memory pipes, or real TLS 1.3 over loopback TCP.
public enum Transport: String, CaseIterable, Sendable {
    case pipe, tls
}

/// One pull or push between two test nodes, as `hp-sync pull` and `hp-sync serve` would run it.
public enum Sync {
    /// Runs `client` pulling from `server` with the real framing; `commitEvery` nil is the
    /// client's default batch.
    @discardableResult
    public static func pull(
        _ client: TestNode, from server: TestNode, dryRun: Bool = false, over transport: Transport = .pipe,
        commitEvery: Int? = nil, clientStream: ((any ByteStream) -> any ByteStream)? = nil
    ) throws -> SyncReport {
        try session(client, server, transport) { channel in
            var options = SyncPlan()
            options.dryRun = dryRun
            if let commitEvery { options.commitEvery = commitEvery }
            return try SyncClient(store: client.store, logger: quietLogger).pull(
                over: channel, serverNodeID: server.nodeID, peerName: server.name, plan: options)
        } wrap: {
            clientStream?($0) ?? $0
        }
    }

    @discardableResult
    public static func push(
        _ client: TestNode, to server: TestNode, dryRun: Bool = false, over transport: Transport = .pipe,
        wrap: ((any ByteStream) -> any ByteStream)? = nil
    ) throws -> SyncReport {
        try session(client, server, transport) { channel in
            var options = SyncPlan()
            options.dryRun = dryRun
            return try SyncClient(store: client.store, logger: quietLogger).push(
                over: channel, serverNodeID: server.nodeID, peerName: server.name, plan: options)
        } wrap: {
            wrap?($0) ?? $0
        }
    }

    public static func both(_ a: TestNode, _ b: TestNode, over transport: Transport = .pipe) throws {
        try pull(a, from: b, over: transport)
        try push(a, to: b, over: transport)
    }

    /// Runs `run` with a channel from `client` to `server` over `transport`; `wrap` sits
    /// between the client's framing and its end of the connection.
    public static func session(
        _ client: TestNode, _ server: TestNode, _ transport: Transport,
        run: (any MessageChannel) throws -> SyncReport, wrap: (any ByteStream) -> any ByteStream
    ) throws -> SyncReport {
        switch transport {
        case .tls:
            let connection = try TLSConnection.connect(
                host: "127.0.0.1", port: try server.serverPort(), identity: client.identity,
                expected: .node(server.nodeID), logger: quietLogger)
            return try run(FramedChannel(stream: wrap(connection)))
        case .pipe:
            return try withServedPipe(server.store, for: client.nodeID) { served in
                try run(FramedChannel(stream: wrap(served.clientEnd)))
            }
        }
    }
}

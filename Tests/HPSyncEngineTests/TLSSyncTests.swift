import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A test node with a real TLS identity, and a server on a loopback port.
final class TLSNode {
    let node: TestNode
    let identity: NodeIdentity
    private(set) var port: UInt16?

    init(_ name: String) throws {
        node = try TestNode(name)
        identity = node.identity
    }

    var address: PeerAddress { PeerAddress(host: "127.0.0.1", port: port!) }

    func serve(timeouts: TLSTimeouts = .init(), limits: ConnectionLimits = .init()) throws {
        port = try node.startServer(timeouts: timeouts, limits: limits)
    }

    func stop() { node.stopServer() }

    func trust(_ other: TLSNode, _ permission: PeerPermission = .readWrite) throws {
        let address = other.port.map { _ in other.address.description }
        try node.store.addPeer(
            Peer(name: other.node.name, nodeID: other.identity.nodeID, address: address, permission: permission))
    }

    func pull(_ text: String, timeouts: TLSTimeouts = .init()) throws -> SyncReport {
        let connector = Connector(store: node.store, identity: identity, timeouts: timeouts, logger: quietLogger)
        let target = try connector.resolve(text)
        let connection = try connector.connect(target)
        return try SyncClient(store: node.store, logger: quietLogger).pull(
            over: FramedChannel(stream: connection), serverNodeID: target.nodeID, peerName: target.name)
    }

    func push(_ text: String, timeouts: TLSTimeouts = .init()) throws -> SyncReport {
        let connector = Connector(store: node.store, identity: identity, timeouts: timeouts, logger: quietLogger)
        let target = try connector.resolve(text)
        let connection = try connector.connect(target)
        return try SyncClient(store: node.store, logger: quietLogger).push(
            over: FramedChannel(stream: connection), serverNodeID: target.nodeID, peerName: target.name)
    }
}

@Suite(.serialized) struct TLSSyncTests {
    @Test func pullAndPushOverRealTLS() throws {
        let a = try TLSNode("a")
        let b = try TLSNode("b")
        try a.serve()
        defer { a.stop() }
        try a.trust(b)
        try b.trust(a)
        for i in 0..<50 { try a.node.add("tls \(i)", image: i % 10 == 0 ? jpeg(UInt8(i), size: 200_000) : nil) }
        let report = try b.pull("a")
        #expect(report.inserted.count == 50)
        #expect(report.imagesTransferred == 5)
        #expect(try b.node.snapshot() == a.node.snapshot())
        try b.node.add("from b", image: jpeg(99))
        let pushed = try b.push("a")
        #expect(pushed.peerCounts.inserted == 1)
        #expect(try b.node.snapshot() == a.node.snapshot())
        #expect(try a.node.store.verify(repair: false).isClean)
    }

    @Test func unknownServerIsNotTrustedAndTheMessageSaysHow() throws {
        let a = try TLSNode("a")
        let b = try TLSNode("b")
        try a.serve()
        defer { a.stop() }
        try a.trust(b)
        #expect {
            try b.pull(a.address.description)
        } throws: { error in
            guard case ConnectError.unknownServer(_, let nodeID) = error else { return false }
            return nodeID == a.identity.nodeID && "\(error)".contains("hp-sync peer add NAME \(a.identity.nodeID)")
        }
    }

    @Test func serverThatChangedIdentityIsRefused() throws {
        let a = try TLSNode("a")
        let b = try TLSNode("b")
        let impostor = try TLSNode("impostor")
        try impostor.serve()
        defer { impostor.stop() }
        try b.node.store.addPeer(
            Peer(name: "a", nodeID: a.identity.nodeID, address: impostor.address.description))
        #expect {
            try b.pull("a")
        } throws: { error in
            guard case TLSError.peerMismatch = error else { return false }
            return true
        }
    }

    @Test func unknownClientIsRefusedWithInstructions() throws {
        let a = try TLSNode("a")
        let b = try TLSNode("b")
        try a.serve()
        defer { a.stop() }
        try b.trust(a)
        try a.node.add("private")
        #expect {
            try b.pull("a")
        } throws: { error in
            guard case SyncError.refusedByPeer(let peerError) = error else { return false }
            return peerError.code == .notAuthorized && peerError.message.contains(b.identity.nodeID.description)
        }
        #expect(try b.node.snapshot().isEmpty)
    }
}

@Suite struct UnauthenticatedLimitTests {
    /// Before the Hello authorizes a peer, its first frame may not announce more than 4 KiB, so
    /// a stranger cannot make the server reserve a 4 MiB buffer per connection.
    @Test func anOversizedHelloIsRefusedBeforeAnyPayloadIsRead() throws {
        let server = try TLSNode("server")
        let stranger = try TestNode("stranger")
        try server.serve()
        defer { server.stop() }
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.address.port, identity: stranger.identity,
            expected: .node(server.identity.nodeID), logger: quietLogger)
        defer { connection.close() }
        try FrameHeader(type: .message, length: 1 << 20).bytes.withUnsafeBytes { try connection.write($0) }
        let reply = try FramedChannel(stream: connection).receiveMessage(expecting: "Error")
        guard case .error(let error) = reply else {
            Issue.record("expected an Error, got \(reply.name)")
            return
        }
        #expect(error.code == .limit)
        #expect(error.message.contains("4096"))
    }
}

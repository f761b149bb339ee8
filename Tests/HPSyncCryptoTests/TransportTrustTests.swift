import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

extension TransportTests {
    @Test func unknownClientIsRefusedByTheHandler() throws {
        let allowed: Set<NodeID> = [try makeIdentity().nodeID]
        let refused = Locked<[NodeID]>([])
        let server = try TestServer { connection in
            guard allowed.contains(connection.peerNodeID) else {
                refused.withLock { $0.append(connection.peerNodeID) }
                return  // the listener closes the connection
            }
            try? connection.write(Array("welcome".utf8))
        }
        defer { server.stop() }
        let stranger = try makeIdentity()
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: stranger, expected: .node(server.identity.nodeID),
            logger: quietLogger)
        var buffer = [UInt8](repeating: 0, count: 64)
        let outcome = Result { try buffer.withUnsafeMutableBytes { try connection.read(into: $0) } }
        switch outcome {
        case .success(let count): #expect(count == 0, "the refused client must see EOF, not data")
        case .failure: break  // a reset is an acceptable refusal too
        }
        #expect(refused.wait(timeout: 3) { $0 == [stranger.nodeID] })
        connection.close()
    }

    @Test func clientRefusesServerWhoseIdentityChanged() throws {
        let pinned = try makeIdentity()
        let server = try TestServer { _ in }
        defer { server.stop() }
        #expect {
            try TLSConnection.connect(
                host: "127.0.0.1", port: server.port, identity: try makeIdentity(), expected: .node(pinned.nodeID),
                logger: quietLogger)
        } throws: { error in
            guard case TLSError.peerMismatch(let expected, let actual) = error else { return false }
            let text = "\(error)"
            return expected == pinned.nodeID && actual == server.identity.nodeID
                && text.contains(pinned.nodeID.description) && text.contains(server.identity.nodeID.description)
                && text.contains("identity changed")
        }
    }

    @Test func oneIdentitysConnectionsShareOneContextThroughAFailedOne() throws {
        let server = try TestServer { connection in try? connection.write(Array("hello".utf8)) }
        defer { server.stop() }
        let identity = try makeIdentity()
        identity.prepareClientContext()
        let prepared = try identity.clientContext()
        // A server that is not the pinned one is refused after its handshake...
        #expect(throws: TLSError.self) {
            try TLSConnection.connect(
                host: "127.0.0.1", port: server.port, identity: identity, expected: .node(try makeIdentity().nodeID),
                logger: quietLogger)
        }
        // ...and the context it used serves the next connections as before.
        for _ in 0..<2 {
            let connection = try TLSConnection.connect(
                host: "127.0.0.1", port: server.port, identity: identity, expected: .node(server.identity.nodeID),
                logger: quietLogger)
            var buffer = [UInt8](repeating: 0, count: 5)
            let count = try buffer.withUnsafeMutableBytes { try connection.read(into: $0) }
            #expect(Array(buffer[..<count]) == Array("hello".utf8))
            connection.close()
        }
        #expect(try identity.clientContext() === prepared)
    }

    @Test func firstContactReportsTheServerNodeID() throws {
        let server = try TestServer { _ in }
        defer { server.stop() }
        let connection = try TLSConnection.connect(
            host: "localhost", port: server.port, identity: try makeIdentity(), expected: .firstContact,
            logger: quietLogger)
        #expect(connection.peerNodeID == server.identity.nodeID)
        connection.close()
    }

    @Test func connectingToAClosedPortFailsClearly() throws {
        let listener = try TLSListener(
            identity: try makeIdentity(), bind: [(host: "127.0.0.1", port: 0)], logger: quietLogger)
        let port = listener.boundAddresses[0].port
        listener.stop()
        try listener.run(handler: { _ in })  // returns at once and closes the socket
        #expect {
            try TLSConnection.connect(
                host: "127.0.0.1", port: port, identity: try makeIdentity(), expected: .firstContact,
                logger: quietLogger)
        } throws: { error in
            guard case TLSError.connectFailed = error else { return false }
            return "\(error)".contains("refused")
        }
    }

    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func tls12ClientIsRefused() throws {
        let handled = Locked(0)
        let server = try TestServer { _ in handled.withLock { $0 += 1 } }
        defer { server.stop() }
        let output = try runTool([opensslPath, "s_client", "-tls1_2", "-connect", "127.0.0.1:\(server.port)"])
        #expect(output.status != 0)
        #expect(output.stdout.contains("Cipher is (NONE)") || output.stderr.contains("alert"))
        #expect(handled.current == 0)
    }

    @Test func silentClientIsDroppedAtHandshakeTimeoutWhileOthersAreServed() throws {
        let server = try TestServer(timeouts: TLSTimeouts(handshake: .seconds(1))) { connection in
            if let bytes = try? connection.readExactly(4) { try? connection.write(bytes) }
        }
        defer { server.stop() }
        let started = Date()
        let silent = HeldConnection(port: server.port)
        try #require(silent.isConnected)
        defer { silent.close() }

        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: try makeIdentity(), expected: .node(server.identity.nodeID),
            logger: quietLogger)
        try connection.write(Array("ping".utf8))
        #expect(try connection.readExactly(4) == Array("ping".utf8))
        connection.close()
        #expect(Date().timeIntervalSince(started) < 0.9, "the silent client must not delay others")

        #expect(silent.closedByPeer(within: 4))
        let dropped = Date().timeIntervalSince(started)
        #expect(dropped >= 0.9 && dropped < 3)
    }
}

import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

#if canImport(Glibc)
    import Glibc
#endif

extension TransportTests {
    @Test func sessionsBeyondTheLimitAreRefusedAtAuthorization() throws {
        let limit = 16
        let started = Locked(0)
        let busy = Locked(0)
        let gate = Locked(false)
        let server = try TestServer(
            limits: ConnectionLimits(sessions: limit, pending: 64, pendingPerAddress: 64)
        ) { (connection: TLSConnection, admission: Admission) in
            guard admission.authorize() else {
                busy.withLock { $0 += 1 }
                try? connection.write(Array("busy".utf8))
                return
            }
            started.withLock { $0 += 1 }
            _ = gate.wait(timeout: 20) { $0 }
            try? connection.write(Array("okok".utf8))
        }
        defer { server.stop() }

        let replies = Locked<[String]>([])
        let port = server.port
        let serverID = server.identity.nodeID
        let clientIdentity = try makeIdentity()
        let clients = (0...limit).map { _ in
            Worker {
                do {
                    let connection = try TLSConnection.connect(
                        host: "127.0.0.1", port: port, identity: clientIdentity, expected: .node(serverID),
                        timeouts: TLSTimeouts(idle: .seconds(20)), logger: quietLogger)
                    let reply = try connection.readExactly(4)
                    replies.withLock { $0.append(String(decoding: reply, as: UTF8.self)) }
                    connection.close()
                } catch {
                    replies.withLock { $0.append("error: \(error)") }
                }
            }
        }
        #expect(started.wait(timeout: 20) { $0 == limit })
        #expect(busy.wait(timeout: 20) { $0 == 1 })
        #expect(server.listener.activeSessions == limit)
        #expect(replies.wait(timeout: 5) { $0 == ["busy"] }, "the busy client is answered while the others wait")
        gate.withLock { $0 = true }
        for client in clients { client.join() }
        let final = replies.current
        #expect(final.filter { $0 == "okok" }.count == limit)
        #expect(final.filter { $0 == "busy" }.count == 1)
        #expect(server.listener.waitForHandlers(timeout: .seconds(5)))
        #expect(server.listener.activeConnections == 0)
    }

    /// Regression (issue 13): plain TCP connections that never start TLS took session slots, so
    /// one host without a certificate locked every peer out.
    @Test func oneAddressCannotTakeMoreThanItsPendingCapNorAnySessionSlot() throws {
        let server = try TestServer(
            limits: ConnectionLimits(sessions: 2, pending: 16, pendingPerAddress: 4),
            timeouts: TLSTimeouts(handshake: .seconds(20))
        ) { (connection: TLSConnection, admission: Admission) in
            if admission.authorize(), let bytes = try? connection.readExactly(4) { try? connection.write(bytes) }
        }
        defer { server.stop() }
        let flood = (0..<12).map { _ in HeldConnection(port: server.port, from: "127.0.0.2") }
        defer { flood.forEach { $0.close() } }
        try #require(flood.allSatisfy { $0.isConnected }, "cannot bind 127.0.0.2 (no loopback /8 here?)")
        // Past the cap the server closes at once, before any TLS.
        let closed = flood.filter { $0.closedByPeer(within: 0.5) }.count
        #expect(closed == 8, "connections past the per-address cap of 4 are closed at once")
        #expect(server.listener.activeConnections == 4)
        #expect(server.listener.activeSessions == 0, "unauthenticated connections hold no session slot")

        // Two real clients from another address are served at once, in session slots.
        for _ in 0..<2 {
            let connection = try TLSConnection.connect(
                host: "127.0.0.1", port: server.port, identity: try makeIdentity(),
                expected: .node(server.identity.nodeID), logger: quietLogger)
            try connection.write(Array("ping".utf8))
            #expect(try connection.readExactly(4) == Array("ping".utf8))
            connection.close()
        }
    }

    /// Regression (issue 13): a server closing a connection before or during the handshake
    /// (load shedding) made the client report an authentication failure, which is never retried.
    @Test func aConnectionClosedDuringTheHandshakeIsInterruptedNotRefused() throws {
        let listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listenFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listenFD, $0, length) }
        }
        try #require(listen(listenFD, 4) == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        let shedder = Worker {
            for _ in 0..<2 {
                let fd = accept(listenFD, nil, nil)
                if fd >= 0 { close(fd) }
            }
        }
        defer { shedder.join() }
        for _ in 0..<2 {
            do {
                let connection = try TLSConnection.connect(
                    host: "127.0.0.1", port: port, identity: try makeIdentity(), expected: .firstContact,
                    logger: quietLogger)
                connection.close()
                Issue.record("the handshake succeeded against a closed socket")
            } catch TLSError.handshakeInterrupted(_, let reason) {
                #expect(!reason.isEmpty)
            } catch {
                Issue.record("expected handshakeInterrupted, got \(error)")
            }
        }
    }
}

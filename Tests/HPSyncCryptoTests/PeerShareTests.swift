import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

extension TransportTests {
    /// Regression (issue 35): one authorized peer that opened sessions and stalled held every
    /// session slot, and other peers were told "busy". Each peer gets its share; past it only
    /// that peer is refused, and a share is given back when its sessions end.
    @Test func onePeerHoldsNoMoreThanItsShareOfTheSessionSlots() throws {
        let gate = Locked(false)
        let server = try TestServer(
            limits: ConnectionLimits(sessions: 4, sessionsPerPeer: 2, pending: 16, pendingPerAddress: 16)
        ) { (connection: TLSConnection, admission: Admission) in
            do throws(Admission.Refusal) {
                try admission.authorize(peer: connection.peerNodeID.description)
            } catch {
                try? connection.write(Array((error == .peerFull(held: 2) ? "peer" : "full").utf8))
                return
            }
            try? connection.write(Array("okok".utf8))
            _ = gate.wait(timeout: 20) { $0 }
        }
        defer { server.stop() }
        let stalling = try makeIdentity()
        let other = try makeIdentity()
        var open: [TLSConnection] = []
        defer { open.forEach { $0.close() } }
        /// Connects as `identity` and returns the server's first word; the connection stays open.
        func session(_ identity: NodeIdentity) throws -> String {
            let connection = try TLSConnection.connect(
                host: "127.0.0.1", port: server.port, identity: identity, expected: .node(server.identity.nodeID),
                timeouts: TLSTimeouts(idle: .seconds(20)), logger: quietLogger)
            open.append(connection)
            return String(decoding: try connection.readExactly(4), as: UTF8.self)
        }
        #expect(try (0..<3).map { _ in try session(stalling) } == ["okok", "okok", "peer"])
        #expect(server.listener.activeSessions == 2)
        #expect(try session(other) == "okok", "the other peer is served while the first holds its share")
        #expect(try session(other) == "okok")
        #expect(try session(other) == "peer")
        #expect(try session(try makeIdentity()) == "full", "the server's own limit still holds")

        gate.set(true)
        open.forEach { $0.close() }
        open = []
        #expect(server.listener.waitForHandlers(timeout: .seconds(10)))
        gate.set(false)
        #expect(try (0..<3).map { _ in try session(stalling) } == ["okok", "okok", "peer"], "shares are given back")
        gate.set(true)
    }
}

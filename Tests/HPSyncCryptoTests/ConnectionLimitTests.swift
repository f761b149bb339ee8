import Foundation
import Testing

@testable import HPSyncCrypto

extension TransportTests {
    @Test func connectionsBeyondTheLimitGoToOnBusy() throws {
        let limit = 64
        let started = Locked(0)
        let busy = Locked(0)
        let gate = Locked(false)
        let server = try TestServer(
            maxConnections: limit,
            handler: { connection in
                started.withLock { $0 += 1 }
                _ = gate.wait(timeout: 20) { $0 }
                try? connection.write(Array("okok".utf8))
            },
            onBusy: { connection in
                busy.withLock { $0 += 1 }
                try? connection.write(Array("busy".utf8))
            })
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
        #expect(server.listener.activeConnections == limit)
        #expect(replies.wait(timeout: 5) { $0 == ["busy"] }, "the busy client is answered while the others wait")
        gate.withLock { $0 = true }
        for client in clients { client.join() }
        let final = replies.current
        #expect(final.filter { $0 == "okok" }.count == limit)
        #expect(final.filter { $0 == "busy" }.count == 1)
        #expect(started.current == limit)
        #expect(server.listener.waitForHandlers(timeout: .seconds(5)))
        #expect(server.listener.activeConnections == 0)
    }
}

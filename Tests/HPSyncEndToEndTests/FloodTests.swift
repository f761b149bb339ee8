import Foundation
import HPSyncCrypto
import HPSyncTesting
import Testing

/// Regression (issue 13): 80 plain TCP connections from one host filled the server's slots and
/// the server closed further connections before TLS, which a trusted peer's `pull --retries 3`
/// reported as an authentication failure (77, never retried) after 0.0 s.
///
/// A small check for CI; `Scripts/torture --flood` measures idle, slowloris and no-Hello floods
/// of hundreds of connections with 20 peers pulling through them (figures in RELIABILITY.md).
@Suite(.serialized) struct FloodTests {
    @Test func idleConnectionsFromOneHostLockNoPeerOut() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.primary.run(["add", "--name", "Lamp"])
        let server = try pair.serve(extra: ["--handshake-timeout", "5s"])

        // Another host (127.0.0.2: Linux routes all of 127/8 to lo) opens 80 connections and
        // never starts TLS; all but its pending cap (8 by default) are closed at once.
        let flood = (0..<80).map { _ in HeldConnection(port: server.port, from: "127.0.0.2") }
        defer { flood.forEach { $0.close() } }
        let connected = flood.allSatisfy { $0.isConnected }
        try #require(connected, "cannot connect from 127.0.0.2 on this machine")
        let shed = HeldConnection.waitUntilClosed(flood, count: 72)
        #expect(shed >= 72, "the server closed \(shed) of the 80 connections past the cap")
        let pulled = try pair.backup.run(["pull", "primary", "--retries", "3", "--retry-delay", "200ms"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try pair.backup.run(["list"]).text.contains("Lamp"))
    }

    @Test func aServerSheddingConnectionsBeforeTLSIsBusyNotARefusal() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let server = try pair.serve(extra: ["--handshake-timeout", "5s", "--max-pending-per-address", "4"])
        // The flood comes from the peer's own address, so its pull finds the cap full once the
        // server has shed the rest.
        let flood = (0..<80).map { _ in HeldConnection(port: server.port) }
        defer { flood.forEach { $0.close() } }
        let shed = HeldConnection.waitUntilClosed(flood, count: 76)
        #expect(shed == 76, "the server closed \(shed) of the 80 connections past the cap")
        let pulled = try pair.backup.run(["pull", "primary"])
        #expect(pulled.status == 75, "a server shedding load is 'try later', not 'fix trust': \(pulled.stderr)")
        #expect(pulled.stderr.contains("busy"), "\(pulled.stderr)")
    }

    /// Regression (issue 35): an authorized peer that opened 100 sessions and stalled after its
    /// PullRequest held all 64 session slots of a `serve` with default budgets, and other peers'
    /// pulls failed with 75. It now holds its share (8 by default); only it is told "busy".
    @Test func onePeerStallingInManySessionsLocksNoOtherPeerOut() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.primary.run(["add", "--name", "Lamp"])
        let server = try pair.serve()

        // One session after another, each stalled once the server's manifest page shows it under
        // way; a refused one is read to its close, so none lingers in the pending budget.
        let attacker = try HostileInputTests.Attacker.listed(as: "holder", on: pair.primary, port: server.port)
        var held: [TLSConnection] = []
        defer { held.forEach { $0.close() } }
        var refusals: [String] = []
        for _ in 0..<66 {
            let connection = try attacker.connect()
            try connection.write(attacker.hello(.pull))
            guard case .message(let reply)? = try HostileInputTests.Attacker.readFrame(connection) else {
                Issue.record("the server closed without a reply")
                connection.close()
                break
            }
            if case .error(let error)? = reply.body {
                refusals.append(error.code == .errorBusy ? "busy: \(error.message)" : "\(error.code): \(error.message)")
                _ = try HostileInputTests.Attacker.outcome(connection)
                connection.close()
                continue
            }
            held.append(connection)
            try connection.write(envelopeFrame { $0.pullRequest.sinceSeq = 0 })
            _ = try HostileInputTests.Attacker.expect(connection) { $0.manifestPage.final }
        }
        #expect(held.count == 8, "the default share of one peer")
        #expect(refusals.count == 58)
        #expect(
            refusals.allSatisfy { $0.hasPrefix("busy: ") && $0.contains("--max-sessions-per-peer") },
            "\(refusals.prefix(2))")

        let pulled = try pair.backup.run(["pull", "primary"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try pair.backup.run(["list"]).text.contains("Lamp"))
    }
}

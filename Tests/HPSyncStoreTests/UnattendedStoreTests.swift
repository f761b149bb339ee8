import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import Testing

@Suite struct SyncLockTests {
    @Test func aSecondHolderIsRefusedWithThePIDUntilTheFirstReleases() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hp-sync-lock-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try SyncLock.acquire(storeDirectory: directory)
        #expect(
            try String(contentsOf: first.url, encoding: .utf8) == "\(ProcessInfo.processInfo.processIdentifier)\n")
        // flock locks belong to the open file description, so a second open in-process conflicts too.
        #expect(throws: SyncLockError.held(path: first.url.path, pid: ProcessInfo.processInfo.processIdentifier)) {
            try SyncLock.acquire(storeDirectory: directory)
        }
        first.release()
        let second = try SyncLock.acquire(storeDirectory: directory)
        second.release()
    }

    @Test func aMissingStoreDirectoryIsNotReportedAsLocked() {
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID())")
        #expect(throws: SyncLockError.self) { try SyncLock.acquire(storeDirectory: missing) }
        do {
            _ = try SyncLock.acquire(storeDirectory: missing)
        } catch SyncLockError.cannotOpen {
        } catch {
            Issue.record("expected cannotOpen, got \(error)")
        }
    }
}

@Suite struct PeerSyncStateTests {
    @Test func successClearsTheErrorAndRemovedPeersAreHidden() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        try store.addPeer(Peer(name: "nas", nodeID: Fixtures.nodeB, permission: .read))
        try store.recordSyncFailure(peer: "nas", direction: .pull, message: "connection refused")
        var states = try store.peerSyncStates()
        #expect(states.count == 1)
        #expect(states[0].lastError == "connection refused")
        #expect(states[0].lastSuccessAt == nil)
        try store.recordSyncSuccess(peer: "nas", direction: .pull)
        states = try store.peerSyncStates()
        #expect(states[0].lastError == nil)
        #expect(states[0].lastSuccessAt == Int64(clock.nowMilliseconds()))
        #expect(states[0].lastFailureAt != nil)
        try store.removePeer(named: "nas")
        #expect(try store.peerSyncStates().isEmpty)
    }

    /// A sync with a peer whose clock differs beyond the skew is recorded at the earlier clock,
    /// so `gc`'s clamp never rests on a time the peer's clock has not reached.
    @Test func aSyncWithASkewedPeerIsRecordedAtTheEarlierClock() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        try store.addPeer(Peer(name: "nas", nodeID: Fixtures.nodeB, permission: .read))
        let now = clock.nowMilliseconds()
        let dayBehind = now - 86_400_000
        try store.recordSyncSuccess(peer: "nas", direction: .pull, peerClock: dayBehind)
        try store.recordServed(peer: "nas", direction: .push, peerClock: dayBehind)
        var states = try store.peerSyncStates()
        #expect(states.map(\.lastSyncedAt) == [Int64(dayBehind), Int64(dayBehind)])
        let cutoff = GCCutoff.decide(requested: Int64(now), peers: ["nas"], states: states, force: false)
        #expect(cutoff.cutoffMilliseconds == Int64(dayBehind))
        // A peer ahead bounds nothing beyond this clock.
        try store.recordSyncSuccess(peer: "nas", direction: .pull, peerClock: now + 86_400_000)
        states = try store.peerSyncStates()
        #expect(states.first { $0.direction == .pull }?.lastSuccessAt == Int64(now))
    }

    /// Regression (issue 35 §4): after `peer rm` and a `peer add` of the name with another node
    /// ID, `status` showed the old machine's last error, and its last sync counted for gc.
    @Test func aPeerAddedAgainUnderItsNameStartsWithNoHistory() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir, clock: TestClock())
        try store.addPeer(Peer(name: "nas", nodeID: Fixtures.nodeB, permission: .read))
        try store.recordSyncSuccess(peer: "nas", direction: .push)
        try store.recordServed(peer: "nas", direction: .pull)
        try store.recordSyncFailure(peer: "nas", direction: .pull, message: "server identity changed")
        try store.removePeer(named: "nas")
        try store.addPeer(Peer(name: "nas", nodeID: NodeID(certificateDER: Array("node C".utf8)), permission: .read))
        #expect(try store.peerSyncStates().isEmpty)
    }

    @Test func eachOutcomeChangesOnlyItsOwnColumnsOfItsOwnDirection() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        try store.addPeer(Peer(name: "nas", nodeID: Fixtures.nodeB, permission: .readWrite))
        let start = Int64(clock.nowMilliseconds())
        try store.recordSyncSuccess(peer: "nas", direction: .pull)
        clock.advance(milliseconds: 1_000)
        try store.recordServed(peer: "nas", direction: .pull)
        clock.advance(milliseconds: 1_000)
        try store.recordSyncFailure(peer: "nas", direction: .pull, message: String(repeating: "x", count: 1_500))
        clock.advance(milliseconds: 1_000)
        try store.recordServed(peer: "nas", direction: .push)

        var states = try store.peerSyncStates()
        #expect(states.map(\.direction) == [.pull, .push])
        #expect(states[0].lastSuccessAt == start)
        #expect(states[0].lastServedAt == start + 1_000)
        #expect(states[0].lastFailureAt == start + 2_000)
        #expect(states[0].lastError == String(repeating: "x", count: 1_000))
        #expect(states[1].lastSuccessAt == nil)
        #expect(states[1].lastFailureAt == nil)
        #expect(states[1].lastError == nil)
        #expect(states[1].lastServedAt == start + 3_000)

        clock.advance(milliseconds: 1_000)
        try store.recordSyncSuccess(peer: "nas", direction: .pull)
        states = try store.peerSyncStates()
        #expect(states[0].lastSuccessAt == start + 4_000)
        #expect(states[0].lastError == nil)
        #expect(states[0].lastFailureAt == start + 2_000)
        #expect(states[0].lastServedAt == start + 1_000)
        #expect(states[1].lastServedAt == start + 3_000)
    }
}

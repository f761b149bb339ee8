import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

@Suite struct ClockAndAuthTests {
    @Test(arguments: Transport.allCases) func editAfterPullWinsEvenWithClockAnHourBehind(_ transport: Transport) throws
    {
        let clockA = TestClock(1_750_000_000_000)
        let clockB = TestClock(1_750_000_000_000 - 3_600_000)
        let a = try TestNode("a", clock: clockA)
        var tolerant = StoreConfiguration()
        tolerant.maxClockSkewMilliseconds = 2 * 3_600_000
        let b = try TestNode("b", clock: clockB, configuration: tolerant)
        try a.allow(b)
        let item = try a.add("Guitar")
        _ = try a.store.edit(item.key, ItemEdit(name: "Guitar (a)"))
        try Sync.pull(b, from: a, over: transport)
        let edited = try b.store.edit(item.key, ItemEdit(name: "Guitar (b, later)"))
        #expect(edited.version > (try a.store.item(item.key)!.version))
        try Sync.push(b, to: a, over: transport)
        #expect(try a.store.item(item.key)?.name == "Guitar (b, later)")
    }

    @Test(arguments: Transport.allCases) func stampBeyondSkewIsRefusedAndTheRestApplies(_ transport: Transport) throws {
        let clockA = TestClock(1_750_000_000_000)
        let a = try TestNode("a", clock: clockA)
        let b = try TestNode("b", clock: TestClock(1_750_000_000_000))
        try a.allow(b)
        let normal = try a.add("Normal")
        clockA.advance(milliseconds: 3_600_000)  // a's clock jumps an hour ahead
        let future = try a.add("From the future")
        let report = try Sync.pull(b, from: a, over: transport)
        #expect(report.refused.kept.map(\.key) == [future.key.rawValue])
        #expect(report.inserted.kept == [normal.key.rawValue])
        #expect(try b.store.item(future.key) == nil)
        // Once b's clock catches up, the next pull retries the refused record.
        b.clock.set(1_750_000_000_000 + 3_600_000)
        let retry = try Sync.pull(b, from: a, over: transport)
        #expect(retry.inserted.kept == [future.key.rawValue])
    }

    @Test(arguments: Transport.allCases) func unknownPeerCannotPull(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.add("Secret")
        #expect {
            try Sync.pull(b, from: a, over: transport)
        } throws: { error in
            guard case SyncError.refusedByPeer(let peerError) = error else { return false }
            return peerError.code == .notAuthorized && peerError.message.contains("hp-sync peer add")
        }
        #expect(try b.snapshot().isEmpty)
    }

    @Test(arguments: Transport.allCases) func readOnlyPeerCannotPush(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b, .read)
        try b.add("Mine")
        #expect {
            try Sync.push(b, to: a, over: transport)
        } throws: { error in
            guard case SyncError.refusedByPeer(let peerError) = error else { return false }
            return peerError.code == .readOnly && peerError.message.contains("not authorized to push")
        }
        #expect(try a.snapshot().isEmpty)
        try Sync.pull(b, from: a, over: transport)
    }

    @Test func helloWithAnotherNodesIDIsRefused() {
        let me = NodeID(certificateDER: [1])
        let other = NodeID(certificateDER: [2])
        let hello = HelloMessage(nodeID: other, storeID: .random(), intent: .pull, software: "x")
        let decision = ServerHandshake.decide(
            hello: hello, certificateNodeID: me, peer: Peer(name: "p", nodeID: me), serverNodeID: other,
            serverStoreID: .random(), software: "s")
        guard case .refuse(let error) = decision else {
            Issue.record("accepted a Hello naming another node")
            return
        }
        #expect(error.code == .nodeIDMismatch)
    }

    @Test func versionNegotiationPicksHighestCommon() {
        // This build speaks 1...6.
        #expect(ServerHandshake.negotiate(min: 1, max: 7) == 6)
        #expect(ServerHandshake.negotiate(min: 2, max: 6) == 6)
        #expect(ServerHandshake.negotiate(min: 1, max: 5) == 5, "a version-5 client is served in version 5")
        #expect(ServerHandshake.negotiate(min: 1, max: 4) == 4, "a version-4 client is served in version 4")
        #expect(ServerHandshake.negotiate(min: 1, max: 3) == 3, "a version-3 client is served in version 3")
        #expect(ServerHandshake.negotiate(min: 1, max: 2) == 2, "a version-2 client is served in version 2")
        #expect(ServerHandshake.negotiate(min: 1, max: 1) == 1, "a version-1 client (the interop client) is served")
        #expect(ServerHandshake.negotiate(min: 7, max: 8) == nil)
    }

    /// A blind store in packs (Protocol.md 5.8.7) cannot be read by a node of version 5 or
    /// older: it is told to upgrade rather than left to take the head of packs for damage. A
    /// store of entries still serves it.
    @Test func aBlindStoreInPacksRefusesANodeThatCannotReadThem() {
        let me = NodeID(certificateDER: [1])
        let server = NodeID(certificateDER: [2])
        var hello = HelloMessage(
            minVersion: ProtocolLimits.blindVersion, maxVersion: ProtocolLimits.fieldMergeVersion, nodeID: me,
            storeID: .random(), intent: .blind, software: "x")
        func decide(packs: Bool) -> ServerHandshake.Decision {
            ServerHandshake.decide(
                hello: hello, certificateNodeID: me, peer: Peer(name: "home", nodeID: me), serverNodeID: server,
                serverStoreID: .random(), software: "s", serverIsBlind: true, blindHoldsPacks: packs)
        }
        guard case .refuse(let error) = decide(packs: true) else {
            Issue.record("a version-5 node was served a store in packs")
            return
        }
        #expect(error.code == .incompatibleVersion)
        #expect(error.message.contains("upgrade hp-sync on this node"))
        guard case .accept(let reply) = decide(packs: false) else {
            Issue.record("a version-5 node was refused a store of entries")
            return
        }
        #expect(reply.version == ProtocolLimits.fieldMergeVersion)
        hello.maxVersion = ProtocolLimits.maxVersion
        guard case .accept(let current) = decide(packs: true) else {
            Issue.record("a version-6 node was refused a store in packs")
            return
        }
        #expect(current.version == ProtocolLimits.blindPacksVersion)
    }
}

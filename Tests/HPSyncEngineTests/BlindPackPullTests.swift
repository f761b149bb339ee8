import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Pulls from and pushes to a blind store in packs over an in-memory pipe, counting the packs
/// read: a pull reads each pack once, also one whose records this node already had, and a node
/// never reads back the packs it pushed; a push cut short resumes after its last head.
@Suite struct BlindPackPullTests {
    /// The blind store's channel, counting the packs asked for; it fails the session before
    /// the BlindSetHead numbered `cutAtHead`, as a connection lost there would.
    final class Counting: MessageChannel {
        let base: any MessageChannel
        let cutAtHead: Int?
        private(set) var packsAsked = 0
        private var heads = 0

        init(_ base: any MessageChannel, cutAtHead: Int? = nil) {
            self.base = base
            self.cutAtHead = cutAtHead
        }

        func send(_ message: Message) throws {
            if case .blindGetPhoto(_, .pack) = message { packsAsked += 1 }
            if case .blindSetHead = message {
                heads += 1
                if heads == cutAtHead { throw CocoaError(.fileWriteUnknown) }
            }
            try base.send(message)
        }

        func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws { try base.sendImageChunk(bytes) }
        func receive(expecting: String) throws -> IncomingFrame { try base.receive(expecting: expecting) }
        var bytesSent: Int64 { base.bytesSent }
        var bytesReceived: Int64 { base.bytesReceived }
        func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {}
        func close() { base.close() }
    }

    /// `node` pulls from or pushes to the blind store `host`; returns the report and the packs read.
    static func session(
        _ intent: SyncIntent, _ node: TestNode, host: TestNode, key: InventoryKey, peer: Peer,
        hooks: EngineTestHooks = .init(), cutAtHead: Int? = nil
    ) throws -> (report: SyncReport, packsRead: Int, findings: [String]) {
        try withServedPipe(host.store, for: node.nodeID) { served in
            let counting = Counting(served.channel(), cutAtHead: cutAtHead)
            let channel = BlindPeerChannel(
                remote: counting, store: node.store, key: key, peer: peer, logger: quietLogger, testHooks: hooks)
            let client = SyncClient(store: node.store, logger: quietLogger)
            let report =
                intent == .push
                ? try client.push(over: channel, serverNodeID: host.nodeID, peerName: peer.name)
                : try client.pull(over: channel, serverNodeID: host.nodeID, peerName: peer.name)
            return (report, counting.packsAsked, channel.findings)
        }
    }

    /// A blind store `host`, the inventory's key, the peer entry for it, and a trusted node
    /// `home` allowed to write there.
    static func blindHome() throws -> (home: TestNode, host: TestNode, key: InventoryKey, offsite: Peer) {
        let host = try TestNode("host")
        try host.store.makeBlind()
        let offsite = Peer(name: "offsite", nodeID: host.nodeID, permission: .readWrite, blind: true)
        return (try node("home", of: host, peer: offsite), host, InventoryKey.random(), offsite)
    }

    /// A new trusted node that lists the blind store `host` as `peer`, and that the host allows.
    static func node(_ name: String, of host: TestNode, peer: Peer) throws -> TestNode {
        let node = try TestNode(name)
        try host.allow(node)
        try node.store.addPeer(peer)
        return node
    }

    @Test func eachPackIsReadOnceAndNeverByTheNodeThatPushedIt() throws {
        let (home, host, key, offsite) = try Self.blindHome()
        let restored = try Self.node("restored", of: host, peer: offsite)
        for index in 0..<1500 {
            try home.add("item \(index)", image: index % 500 == 0 ? jpeg(UInt8(index % 250 + 1)) : nil)
        }

        let pushed = try Self.session(.push, home, host: host, key: key, peer: offsite)
        #expect(pushed.report.peerCounts.inserted == 1500)
        #expect(pushed.packsRead == 0)
        #expect(try host.store.sealedDirectory(.pack).packCount == 2, "1,024 records and 476")
        #expect(try Self.session(.pull, home, host: host, key: key, peer: offsite).packsRead == 0, "its own")

        let first = try Self.session(.pull, restored, host: host, key: key, peer: offsite)
        #expect(first.packsRead == 2 && first.findings.isEmpty)
        #expect(try restored.snapshot() == home.snapshot())
        #expect(try Self.session(.pull, restored, host: host, key: key, peer: offsite).packsRead == 0)

        // An edit on home: one more pack, which the restored node reads alone.
        let edited = try home.store.records([home.snapshot()[7].key])[0]
        _ = try home.store.edit(edited.key, ItemEdit(name: "edited"))
        #expect(try Self.session(.push, home, host: host, key: key, peer: offsite).report.peerCounts.updated == 1)
        let next = try Self.session(.pull, restored, host: host, key: key, peer: offsite)
        #expect(next.packsRead == 1 && next.report.counts.updated == 1)
        #expect(try restored.snapshot() == home.snapshot())

        // A node that forgot what it read (the peer removed and added again) reads every pack
        // once more, applies nothing new, and then none again.
        try restored.store.removePeer(named: "offsite")
        try restored.store.addPeer(offsite)
        let again = try Self.session(.pull, restored, host: host, key: key, peer: offsite)
        #expect(again.packsRead == 3 && again.report.counts.inserted + again.report.counts.updated == 0)
        #expect(try Self.session(.pull, restored, host: host, key: key, peer: offsite).packsRead == 0)
    }
}

extension BlindPackPullTests {
    /// A push of 3,000 records in packs of 1,024, a head after each pack, cut before its last
    /// head: the pages whose records the second head names (two of 1,000) are durable, so run
    /// again it offers only the third page and stores what no named pack holds; a restore then
    /// has everything.
    @Test func aPushCutShortResumesAfterItsLastHead() throws {
        let (home, host, key, offsite) = try Self.blindHome()
        for index in 0..<3000 { try home.add("item \(index)") }
        var hooks = EngineTestHooks()
        hooks.blindPacksPerHead = 1

        // Heads: open, after pack 1, after pack 2, the last (cut).
        #expect(throws: (any Error).self) {
            _ = try Self.session(.push, home, host: host, key: key, peer: offsite, hooks: hooks, cutAtHead: 4)
        }
        let resumed = try Self.session(.push, home, host: host, key: key, peer: offsite, hooks: hooks)
        #expect(resumed.report.peerCounts.entries == 1000, "the third page alone")
        #expect(resumed.report.peerCounts.inserted == 3000 - 2048, "what the two named packs do not hold")

        let restored = try Self.node("restored", of: host, peer: offsite)
        let pulled = try Self.session(.pull, restored, host: host, key: key, peer: offsite)
        #expect(pulled.findings.isEmpty && pulled.packsRead == 3, "the cut push's third pack is named by no head")
        #expect(try restored.snapshot() == home.snapshot())
    }
}

extension URL {
    /// The sealed files in this folder (uploads in progress left out).
    fileprivate var packCount: Int {
        get throws {
            try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.count
        }
    }
}

extension BlindPackPullTests {
    /// A head names at most `BlindPackHead.maxPacks` packs: a push that would name one more stops
    /// with `tooManyPacks` before it names anything, and the head stays as it was.
    @Test func aPushPastTheLargestHeadStopsWithAClearError() throws {
        let (home, host, key, offsite) = try Self.blindHome()
        // A head naming as many packs as it can, all of them known to home (as if it had read them).
        var generator = SplitMix64(seed: 26)
        let packs = (0..<BlindPackHead.maxPacks).map { _ in
            BlindPackHead.Pack(
                id: BlindID(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })!, plainSize: 100)
        }
        let full = BlindPackHead(epoch: 1, isOpen: false, packs: packs)
        #expect(try host.store.setBlindHead(expected: 0, full.sealed(keys: BlindKeys(key), store: host.store.storeID)))
        let empty = BlindPackIndex(entries: []).encoded()
        try home.store.rememberBlindPacks(
            packs.map { BlindPackRecord(id: $0.id, plainSize: $0.plainSize, applied: true, contents: empty) },
            peer: host.nodeID)
        _ = try home.add("one more")

        #expect(throws: BlindError.tooManyPacks(peer: "offsite", count: BlindPackHead.maxPacks + 1)) {
            _ = try Self.session(.push, home, host: host, key: key, peer: offsite)
        }
        let head = try BlindPackHead.open(try host.store.blindHead(), keys: BlindKeys(key), store: host.store.storeID)
        #expect(head?.packs == packs, "the head names the same packs (the push's open head at most)")
    }
}

import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Pushes to a blind peer over an in-memory pipe, with the blind store's answers filtered: a
/// push to a store of version-4 entries mirrors its own entries from what it sent only when
/// BlindPutDone numbers them as sent (Protocol.md 5.8.6), and a push that loses the head to
/// another writer stops and lands when run again, in either format.
@Suite struct BlindPushSessionTests {
    /// How the blind store keeps the inventory: version-4 entries (its trusted nodes offer it
    /// version 5 at most) or packs.
    enum Format: CaseIterable, Sendable {
        case entries, packs

        var hooks: EngineTestHooks {
            var hooks = EngineTestHooks()
            if self == .entries { hooks.maxVersion = ProtocolLimits.fieldMergeVersion }
            return hooks
        }
    }

    /// The blind store's channel through a filter that adds `raise` to every BlindPutDone's
    /// through_seq of a put (as a store that numbered the put otherwise would answer), counts
    /// the BlindList requests sent, and can let another writer go first.
    final class Renumbering: MessageChannel {
        let base: any MessageChannel
        let raise: Int64
        private(set) var lists = 0
        /// Runs once, before the first BlindSetHead goes out (another writer's turn).
        var beforeFirstHead: (() throws -> Void)?
        /// Runs once, before the second BlindSetHead (the push has written: it holds the lock).
        var beforeSecondHead: (() throws -> Void)?
        private var heads = 0

        init(_ base: any MessageChannel, raise: Int64) {
            self.base = base
            self.raise = raise
        }

        func send(_ message: Message) throws {
            if case .blindList = message { lists += 1 }
            if case .blindSetHead = message {
                heads += 1
                if heads == 1, let run = beforeFirstHead { try run() }
                if heads == 2, let run = beforeSecondHead { try run() }
            }
            try base.send(message)
        }

        func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws { try base.sendImageChunk(bytes) }

        func receive(expecting: String) throws -> IncomingFrame {
            let frame = try base.receive(expecting: expecting)
            // A head's BlindPutDone says through_seq 0; a put's names its last seq.
            if case .message(.blindPutDone(let applied, let stale, let through)) = frame, through > 0 {
                return .message(.blindPutDone(applied: applied, stale: stale, throughSeq: through + raise))
            }
            return frame
        }

        var bytesSent: Int64 { base.bytesSent }
        var bytesReceived: Int64 { base.bytesReceived }
        func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {}
        func close() { base.close() }
    }

    @Test(arguments: [Int64(0), 7])
    func aPutNumberedOtherwiseIsListedBackAndTheHeadStillHolds(raise: Int64) throws {
        let home = try TestNode("home")
        let host = try TestNode("host")
        try host.store.makeBlind()
        try host.allow(home)
        for index in 0..<30 {
            try home.add("item \(index)", value: Int64(index), image: index % 10 == 0 ? jpeg(UInt8(index + 1)) : nil)
        }
        let key = InventoryKey.random()
        let offsite = Peer(name: "offsite", nodeID: host.nodeID, permission: .readWrite, blind: true)
        try home.store.addPeer(offsite)
        var hooks = EngineTestHooks()
        hooks.pageSize = 8

        let lists = try withServedPipe(host.store, for: home.nodeID) { served in
            let filter = Renumbering(served.channel(), raise: raise)
            let channel = BlindPeerChannel(
                remote: filter, store: home.store, key: key, peer: offsite, logger: quietLogger,
                testHooks: Format.entries.hooks)
            let report = try SyncClient(store: home.store, logger: quietLogger, testHooks: hooks).push(
                over: channel, serverNodeID: host.nodeID, peerName: offsite.name)
            #expect(report.peerCounts.inserted == 30)
            return filter.lists
        }
        // One listing before the push and one before the head is sealed; a put numbered
        // otherwise is listed back on top of those.
        if raise == 0 { #expect(lists == 2) } else { #expect(lists > 2) }

        let held = try host.store.blindEntries(after: 0, limit: 100).entries
        let mirrored = try home.store.blindMirrorRows(peer: host.nodeID, after: 0, limit: 100).map(\.entry)
        #expect(held.count == 30)
        #expect(mirrored.map(\.id) == held.map(\.id))
        #expect(mirrored.map(\.seq) == held.map(\.seq))
        #expect(mirrored.map(\.version) == held.map(\.version))

        // A node with only the key restores everything: the sealed head names what the store holds.
        let restored = try Self.restore(from: host, key: key, peer: offsite, format: .entries)
        #expect(try restored.snapshot().map(\.name) == home.snapshot().map(\.name))
        #expect(try restored.snapshot().map(\.version) == home.snapshot().map(\.version))
    }

    /// Two trusted nodes push to one blind store; the second node's session listed the store
    /// before the first one wrote. Its open head (BlindSetHead expecting the epoch it saw) is
    /// refused, the push stops with `concurrentWrite` having stored nothing, and run again it
    /// lands beside the first node's entries, with a head a restore checks.
    @Test(arguments: Format.allCases)
    func aPushThatLosesTheHeadToAnotherWriterStopsAndLandsWhenRunAgain(format: Format) throws {
        let (host, key, offsite, nodes) = try Self.twoWriters()
        func push(_ node: TestNode, before: (() throws -> Void)? = nil) throws -> SyncReport {
            try Self.push(node, to: host, key: key, peer: offsite, format: format) { $0.beforeFirstHead = before }
        }

        #expect(throws: BlindError.concurrentWrite(peer: "offsite")) {
            _ = try push(nodes[1]) { _ = try push(nodes[0]) }
        }
        #expect(try Self.restore(from: host, key: key, peer: offsite, format: format).snapshot().count == 5)
        #expect(try push(nodes[1]).peerCounts.inserted == 5)
        let restored = try Self.restore(from: host, key: key, peer: offsite, format: format, as: "restored-again")
        #expect(try restored.snapshot().count == 10)
        if format == .packs {
            #expect(try host.store.blindEntries(after: 0, limit: 100).entries.isEmpty, "no entry, only packs")
        }
    }

    /// A blind store takes one writer at a time: a node that pushes while another's push holds
    /// the store (between its open head and its sealed one) waits, then is told ERROR_BUSY and
    /// stores nothing; the first push lands, and the second, run again, lands beside it.
    @Test(arguments: Format.allCases)
    func aSecondWriterWaitsThenIsToldBusyAndRunAgainLands(format: Format) throws {
        let (host, key, offsite, nodes) = try Self.twoWriters()
        var hooks = EngineTestHooks()
        hooks.blindWriterWait = .milliseconds(200)
        func push(_ node: TestNode, whileHolding other: (() throws -> Void)? = nil) throws -> SyncReport {
            try Self.push(node, to: host, key: key, peer: offsite, format: format, hooks: hooks) {
                $0.beforeSecondHead = other
            }
        }

        var refusal: (any Error)?
        var storedMeanwhile = -1
        let meanwhile: () throws -> Void = {
            do { _ = try push(nodes[1]) } catch { refusal = error }
            storedMeanwhile = try Self.stored(at: host, format: format)
        }
        let first = try push(nodes[0], whileHolding: meanwhile)
        #expect(storedMeanwhile == 5, "only the first node's writes while it holds the store")
        #expect("\(refusal.map { "\($0)" } ?? "no error")".contains("another node is writing to this blind store"))
        #expect(first.peerCounts.inserted == 5)
        #expect(try push(nodes[1]).peerCounts.inserted == 5)
        #expect(try Self.restore(from: host, key: key, peer: offsite, format: format).snapshot().count == 10)
    }

    /// What the blind store holds: its entries, or the records in the packs on its disk (a pack
    /// is a sealed stream of up to 1,024 records; five items fit in one).
    static func stored(at host: TestNode, format: Format) throws -> Int {
        switch format {
        case .entries: try host.store.blindEntries(after: 0, limit: 100).entries.count
        case .packs:
            try FileManager.default.contentsOfDirectory(atPath: host.store.sealedDirectory(.pack).path).count * 5
        }
    }

    /// A blind store and two trusted nodes of one inventory, five items each, both allowed to
    /// write to it as their peer "offsite".
    static func twoWriters() throws -> (host: TestNode, key: InventoryKey, offsite: Peer, nodes: [TestNode]) {
        let host = try TestNode("host")
        try host.store.makeBlind()
        let key = InventoryKey.random()
        let offsite = Peer(name: "offsite", nodeID: host.nodeID, permission: .readWrite, blind: true)
        var nodes: [TestNode] = []
        for name in ["first", "second"] {
            let node = try TestNode(name)
            try host.allow(node)
            try node.store.addPeer(offsite)
            for index in 0..<5 { try node.add("\(name) \(index)") }
            nodes.append(node)
        }
        return (host, key, offsite, nodes)
    }

    /// `node` pushes to the blind store `host` (its server made with `hooks`) through a
    /// `Renumbering` filter that `configure` sets up.
    static func push(
        _ node: TestNode, to host: TestNode, key: InventoryKey, peer: Peer, format: Format,
        hooks: EngineTestHooks = EngineTestHooks(), configure: (Renumbering) -> Void
    ) throws -> SyncReport {
        try withServedPipe(
            host.store, for: node.nodeID, session: { ServerSession(store: $0, logger: quietLogger, testHooks: hooks) }
        ) { served in
            let filter = Renumbering(served.channel(), raise: 0)
            configure(filter)
            let channel = BlindPeerChannel(
                remote: filter, store: node.store, key: key, peer: peer, logger: quietLogger, testHooks: format.hooks)
            return try SyncClient(store: node.store, logger: quietLogger).push(
                over: channel, serverNodeID: host.nodeID, peerName: peer.name)
        }
    }

    /// A new node with only `key`, and everything it pulled from the blind store `host`; the
    /// pull must find nothing wrong (the sealed head names exactly what the store holds).
    static func restore(
        from host: TestNode, key: InventoryKey, peer: Peer, format: Format, as name: String = "restored"
    ) throws -> TestNode {
        let restored = try TestNode(name)
        try host.allow(restored)
        try restored.store.addPeer(peer)
        try withServedPipe(host.store, for: restored.nodeID) { served in
            let channel = BlindPeerChannel(
                remote: served.channel(), store: restored.store, key: key, peer: peer, logger: quietLogger,
                testHooks: format.hooks)
            _ = try SyncClient(store: restored.store, logger: quietLogger).pull(
                over: channel, serverNodeID: host.nodeID, peerName: peer.name)
            #expect(channel.findings.isEmpty)
        }
        return restored
    }
}

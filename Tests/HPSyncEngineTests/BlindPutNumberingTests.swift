import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A push to a blind peer mirrors its own entries from what it sent only when the blind store's
/// BlindPutDone numbers them as sent (Protocol.md 5.8.6); any other answer is listed back, and
/// either way the mirror, and the head sealed over it, are what the store holds.
@Suite struct BlindPutNumberingTests {
    /// The blind store's channel through a filter that adds `raise` to every BlindPutDone's
    /// through_seq of a put (as a store that numbered the put otherwise would answer), and
    /// counts the BlindList requests sent.
    final class Renumbering: MessageChannel {
        let base: any MessageChannel
        let raise: Int64
        private(set) var lists = 0

        init(_ base: any MessageChannel, raise: Int64) {
            self.base = base
            self.raise = raise
        }

        func send(_ message: Message) throws {
            if case .blindList = message { lists += 1 }
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
                remote: filter, store: home.store, key: key, peer: offsite, logger: quietLogger)
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
        let restored = try TestNode("restored")
        try host.allow(restored)
        try restored.store.addPeer(offsite)
        try withServedPipe(host.store, for: restored.nodeID) { served in
            let channel = BlindPeerChannel(
                remote: served.channel(), store: restored.store, key: key, peer: offsite, logger: quietLogger)
            _ = try SyncClient(store: restored.store, logger: quietLogger).pull(
                over: channel, serverNodeID: host.nodeID, peerName: offsite.name)
            #expect(channel.findings.isEmpty)
        }
        #expect(try restored.snapshot().map(\.name) == home.snapshot().map(\.name))
        #expect(try restored.snapshot().map(\.version) == home.snapshot().map(\.version))
    }
}

import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A blind store of version-4 entries, written by two nodes, is converted to packs by the first
/// push of a version-6 node: everything it held, the other node's records and the photos
/// included, is in packs afterwards, the entries are gone from the host, and a version-5 node is
/// told to upgrade.
@Suite struct BlindEntryConversionTests {
    typealias Format = BlindPushSessionTests.Format

    @Test func aPushConvertsAStoreOfEntriesCarryingOverEveryNodesRecords() throws {
        let (host, key, offsite, nodes) = try BlindPushSessionTests.twoWriters()
        _ = try nodes[0].add("with a photo", image: jpeg(9))
        for node in nodes {
            let report = try BlindPushSessionTests.push(node, to: host, key: key, peer: offsite, format: .entries) {
                _ in
            }
            #expect(report.peerCounts.inserted == (node === nodes[0] ? 6 : 5))
        }
        #expect(try host.store.blindEntries(after: 0, limit: 100).entries.count == 11)

        // The first node's next push converts the store; its own records are held there already.
        let converting = try BlindPushSessionTests.push(nodes[0], to: host, key: key, peer: offsite, format: .packs) {
            _ in
        }
        #expect(converting.peerCounts.inserted == 0 && converting.peerCounts.updated == 0)
        #expect(try host.store.blindEntries(after: 0, limit: 100).entries.isEmpty, "the host dropped the entries")
        #expect(try BlindPushSessionTests.stored(at: host, format: .packs) > 0)
        #expect(try host.store.holdsSealedPacks)

        // Every node's records came over, the photo too; the second node's own are held there.
        let restored = try BlindPushSessionTests.restore(from: host, key: key, peer: offsite, format: .packs)
        let names = try Set((nodes[0].snapshot() + nodes[1].snapshot()).map(\.name))
        #expect(try Set(restored.snapshot().map(\.name)) == names && names.count == 11)
        #expect(try restored.snapshot().filter { $0.image != nil }.count == 1)
        let second = try BlindPushSessionTests.push(nodes[1], to: host, key: key, peer: offsite, format: .packs) { _ in
        }
        #expect(second.peerCounts.inserted == 0)

        // A node that speaks version 5 at most cannot read packs: told so, it writes nothing.
        #expect {
            _ = try BlindPushSessionTests.push(nodes[1], to: host, key: key, peer: offsite, format: .entries) { _ in }
        } throws: { "\($0)".contains("upgrade hp-sync on this node") }
    }

    /// The host's channel with the first record it serves altered (a damaged or tampered entry).
    final class AlteringFirstRecord: MessageChannel {
        let base: any MessageChannel
        private var altered = false

        init(_ base: any MessageChannel) { self.base = base }

        func send(_ message: Message) throws { try base.send(message) }
        func sendImageChunk(_ bytes: UnsafeRawBufferPointer) throws { try base.sendImageChunk(bytes) }

        func receive(expecting: String) throws -> IncomingFrame {
            let frame = try base.receive(expecting: expecting)
            guard !altered, case .message(.blindObjects(var objects, let isFinal)) = frame, !objects.isEmpty else {
                return frame
            }
            altered = true
            objects[0].sealed[objects[0].sealed.count / 2] ^= 0x5A
            return .message(.blindObjects(objects, isFinal: isFinal))
        }

        var bytesSent: Int64 { base.bytesSent }
        var bytesReceived: Int64 { base.bytesReceived }
        func limitNextFrame(maxBytes: Int, deadline: ContinuousClock.Instant?) {}
        func close() { base.close() }
    }

    /// An entry that does not open while the store is converted is reported and left behind;
    /// the converting push then offers everything it holds, so its own record of that entry is
    /// stored again, and a restore has all of them.
    @Test func anEntryThatDoesNotOpenIsReportedAndStoredAgainByItsOwner() throws {
        let (host, key, offsite, nodes) = try BlindPushSessionTests.twoWriters()
        for node in nodes {
            _ = try BlindPushSessionTests.push(node, to: host, key: key, peer: offsite, format: .entries) { _ in }
        }
        let findings = try withServedPipe(host.store, for: nodes[0].nodeID) { served in
            let channel = BlindPeerChannel(
                remote: AlteringFirstRecord(served.channel()), store: nodes[0].store, key: key, peer: offsite,
                logger: quietLogger)
            let report = try SyncClient(store: nodes[0].store, logger: quietLogger).push(
                over: channel, serverNodeID: host.nodeID, peerName: offsite.name)
            #expect(report.peerCounts.inserted == 1, "the record left behind, stored again")
            return channel.findings
        }
        #expect(findings.count == 1 && findings[0].contains("failed authentication"), "\(findings)")
        let restored = try BlindPushSessionTests.restore(from: host, key: key, peer: offsite, format: .packs)
        #expect(try restored.snapshot().count == 10)
    }
}

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
}

import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A pack holds item versions as a Records message, sealed (`Docs/blind-packs-design.md`): what
/// goes in comes out, field states and tombstones included, and nothing a blind store could do to
/// it opens.
@Suite struct BlindPackSealTests {
    /// Live items (one with a photo, one edited field by field) and a tombstone, as a source sends them.
    static func versions() throws -> [Item] {
        let node = try TestNode("node")
        let kept = try node.add("Guitar", value: 900, image: jpeg(7, size: 700))
        let edited = try node.add("Amp", value: 300)
        _ = try node.store.edit(edited.key, ItemEdit(name: "Amp, serviced"))
        let gone = try node.add("Old radio")
        _ = try node.store.delete([gone.key])
        return try node.store.records([kept.key, edited.key, gone.key])
    }

    @Test func whatGoesInComesOut() throws {
        let seal = BlindPackSeal(keys: BlindKeys(InventoryKey.random()))
        let items = try Self.versions()
        #expect(items.contains { $0.deleted } && items.contains { $0.mergeState != nil })
        let pack = try seal.seal(items)
        #expect(Int64(pack.bytes.count) == BlindKeys.sealedSize(of: .pack, plainSize: pack.plainSize))
        #expect(try seal.open(pack.bytes, id: pack.id, plainSize: pack.plainSize) == items)
        #expect(try seal.seal(items).id != pack.id, "every pack has a fresh ID")
    }

    @Test func nothingABlindStoreCouldDoOpens() throws {
        let keys = BlindKeys(InventoryKey.random())
        let seal = BlindPackSeal(keys: keys)
        let pack = try seal.seal(try Self.versions())
        let other = try seal.seal([try Self.versions()[0]])
        var flipped = pack.bytes
        flipped[flipped.count / 2] ^= 1
        let attempts: [(String, () throws -> [Item])] = [
            ("a flipped byte", { try seal.open(flipped, id: pack.id, plainSize: pack.plainSize) }),
            ("cut short", { try seal.open(Array(pack.bytes.dropLast(16)), id: pack.id, plainSize: pack.plainSize) }),
            ("another pack's bytes", { try seal.open(other.bytes, id: pack.id, plainSize: pack.plainSize) }),
            ("under another ID", { try seal.open(pack.bytes, id: other.id, plainSize: pack.plainSize) }),
            ("another size", { try seal.open(pack.bytes, id: pack.id, plainSize: pack.plainSize + 1) }),
            (
                "another inventory's key",
                {
                    try BlindPackSeal(keys: BlindKeys(InventoryKey.random())).open(
                        pack.bytes, id: pack.id, plainSize: pack.plainSize)
                }
            ),
        ]
        for (what, attempt) in attempts {
            #expect(throws: BlindRecordSeal.Failure.self, "\(what)") { try attempt() }
        }
    }

    /// Only a holder of the key could seal these; a reader still refuses them.
    @Test func aPackOfNoRecordsOrOfOneItemTwiceIsRefused() throws {
        let keys = BlindKeys(InventoryKey.random())
        let seal = BlindPackSeal(keys: keys)
        let node = try TestNode("node")
        let item = try node.add("Lamp")
        let newer = try node.store.edit(item.key, ItemEdit(name: "Lamp, rewired"))
        for (what, plaintext) in [
            ("no record", Message.records([]).serializedEnvelope()),
            ("one item twice", Message.records([item, newer]).serializedEnvelope()),
            ("another message", Message.endSession.serializedEnvelope()),
        ] {
            let id = BlindID(bytes: BlindKeys.newPackID())!
            var sealer = keys.sealer(.pack, id: id.bytes, plainSize: Int64(plaintext.count))
            let sealed = sealer.update(plaintext) + (try sealer.finish())
            #expect(throws: BlindRecordSeal.Failure.self, "\(what)") {
                try seal.open(sealed, id: id, plainSize: Int64(plaintext.count))
            }
        }
    }
}

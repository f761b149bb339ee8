import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// What a push skips: a version the packs hold in the same merge state, or an older one; what it
/// stores: a newer version, the same one in another merge state, a key no pack holds.
@Suite struct BlindPackHeldTests {
    @Test func aPushSkipsWhatThePacksHoldAndStoresTheRest() throws {
        let items = try BlindPackSealTests.versions()
        let seal = BlindRecordSeal(keys: BlindKeys(InventoryKey.random()))
        var held = BlindPackHeld()
        let added = held.add(BlindPackIndex(items, seal: seal).encoded())
        let refused = !held.add([2, 0, 0])
        #expect(added)
        #expect(refused, "bytes that are not an index")
        for item in items {
            let entry = ManifestEntry(
                key: item.key, version: item.version, deleted: item.deleted, seq: 1, mergeDigest: item.mergeDigest)
            #expect(held.holds(entry), "the same version and state")
            #expect(held.contains(item.key))
            var otherState = entry
            otherState.mergeDigest &+= 1
            #expect(!held.holds(otherState), "the same version in another merge state")
            var newer = entry
            newer.version = Version(stamp: VersionStamp(rawValue: item.version.stamp.rawValue + 1), origin: item.version.origin)
            #expect(!held.holds(newer), "a newer version")
            var older = entry
            older.version = Version(stamp: VersionStamp(rawValue: item.version.stamp.rawValue - 1), origin: item.version.origin)
            older.mergeDigest &+= 1
            #expect(held.holds(older), "an older version, whatever its state")
        }
        let unknown = ManifestEntry(
            key: .random(), version: items[0].version, deleted: false, seq: 1, mergeDigest: 0)
        #expect(!held.holds(unknown) && !held.contains(unknown.key))
        let photos = items.compactMap(\.image).map { seal.photo($0).id }
        #expect(held.photos == Set(photos) && !photos.isEmpty)
    }

    @Test func theNewestVersionOfAKeyAcrossPacksCounts() throws {
        let node = try TestNode("node")
        let item = try node.add("Guitar")
        let first = try node.store.records([item.key])
        _ = try node.store.edit(item.key, ItemEdit(name: "Guitar, restrung"))
        let second = try node.store.records([item.key])
        let seal = BlindRecordSeal(keys: BlindKeys(InventoryKey.random()))
        for order in [[second, first], [first, second]] {
            var held = BlindPackHeld()
            for pack in order {
                let added = held.add(BlindPackIndex(pack, seal: seal).encoded())
                #expect(added)
            }
            let newest = second[0]
            #expect(
                held.holds(
                    ManifestEntry(
                        key: newest.key, version: newest.version, deleted: false, seq: 2,
                        mergeDigest: newest.mergeDigest)))
            let oldest = first[0]
            #expect(
                held.holds(
                    ManifestEntry(
                        key: oldest.key, version: oldest.version, deleted: false, seq: 1,
                        mergeDigest: oldest.mergeDigest &+ 1)),
                "an older version is held whatever its state: the newest wins")
        }
    }
}

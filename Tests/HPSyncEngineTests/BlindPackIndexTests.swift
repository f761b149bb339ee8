import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// The trusted node's memory of a pack: the same entries back from its bytes, 35 bytes a record,
/// and anything else refused rather than misread.
@Suite struct BlindPackIndexTests {
    @Test func itemKeysGoToSixteenBytesAndBack() throws {
        var generator = SplitMix64(seed: 25)
        for _ in 0..<500 {
            let key = ItemKey.random(using: &generator)
            #expect(key.bytes.count == 16)
            #expect(ItemKey(bytes: key.bytes) == key)
            #expect(ItemKey(bytes: key.bytes)?.rawValue == key.rawValue)
        }
        let known = try ItemKey("4a73b5d2-a6f4-4b40-9f82-ea1e34c1dc04")
        #expect(known.bytes.first == 0x4A && known.bytes.last == 0x04)
        #expect(ItemKey(bytes: [UInt8](repeating: 0, count: 15)) == nil)
    }

    @Test func aPacksRecordsGoToBytesAndBack() throws {
        let items = try BlindPackSealTests.versions()
        let seal = BlindRecordSeal(keys: BlindKeys(InventoryKey.random()))
        let index = BlindPackIndex(items, seal: seal)
        #expect(index.entries.count == 3 && index.entries.contains { $0.deleted })
        #expect(index.entries.contains { $0.mergeDigest != 0 }, "a field-by-field edit has a merge digest")
        let withPhoto = try #require(items.first { $0.image != nil })
        #expect(index.entries.first { $0.key == withPhoto.key }?.photo == seal.photo(withPhoto.image!).id)
        #expect(index.entries.filter { $0.photo != nil }.count == 1)
        let bytes = index.encoded()
        #expect(bytes.count == 1 + 2 + 32 + 4 + 3 * 35 + 32, "one origin, three records, one photo")
        #expect(BlindPackIndex(decoding: bytes) == index)
        #expect(BlindPackIndex(decoding: BlindPackIndex(entries: []).encoded()) == BlindPackIndex(entries: []))
    }

    @Test func bytesThatAreNotAnIndexAreRefused() throws {
        let seal = BlindRecordSeal(keys: BlindKeys(InventoryKey.random()))
        let bytes = BlindPackIndex(try BlindPackSealTests.versions().filter { $0.image == nil }, seal: seal).encoded()
        let withPhoto = BlindPackIndex(try BlindPackSealTests.versions(), seal: seal).encoded()
        var badOrigin = bytes
        badOrigin[1 + 2 + 32 + 4 + 16 + 8 + 1] = 1
        var badFlags = bytes
        badFlags[1 + 2 + 32 + 4 + 16 + 8 + 2] = 4
        var photoCut = bytes
        photoCut[1 + 2 + 32 + 4 + 35 + 16 + 8 + 2] |= 2
        for (what, candidate) in [
            ("empty", []), ("another format", [2] + bytes.dropFirst()), ("cut short", Array(bytes.dropLast())),
            ("one byte more", bytes + [0]), ("an origin that is not listed", badOrigin), ("unknown flags", badFlags),
            ("a photo flagged but cut", photoCut), ("a photo cut short", Array(withPhoto.dropLast())),
        ] {
            #expect(BlindPackIndex(decoding: candidate) == nil, "\(what)")
        }
    }
}

extension BlindPackIndex {
    /// Reads what `encoded()` wrote back into entries, through `scan` (what a push reads); nil
    /// for anything else.
    init?(decoding bytes: [UInt8]) {
        var entries: [Entry] = []
        let valid = Self.scan(bytes) { record in
            let halves = [record.key.high, record.key.low]
            let keyBytes = halves.flatMap { half in (0..<8).map { UInt8(truncatingIfNeeded: half >> (56 - 8 * $0)) } }
            entries.append(
                Entry(
                    key: ItemKey(bytes: keyBytes)!, version: record.version, deleted: record.deleted,
                    mergeDigest: record.mergeDigest, photo: record.photo))
            return true
        }
        guard valid else { return nil }
        self.init(entries: entries)
    }
}

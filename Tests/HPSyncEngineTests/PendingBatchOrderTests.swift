import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A sealed batch hands its records to the store in key order (their text order), each record
/// still whole: the sort moves records by the keys' 128-bit values.
@Suite struct PendingBatchOrderTests {
    static let origin = NodeID(certificateDER: [9])

    static func record(_ key: ItemKey, stamp: UInt64 = 1) -> IncomingRecord {
        IncomingRecord(
            item: Item(
                key: key, name: key.rawValue, dateCreatedMilliseconds: 1,
                version: Version(stamp: VersionStamp(rawValue: stamp), origin: origin)))
    }

    static func sealed(_ pages: [[IncomingRecord]]) throws -> [IncomingRecord] {
        var batch = PendingBatch()
        batch.reserve(entries: 16)
        for page in pages { _ = batch.add(page, local: [:]) }
        batch.lastPage = ManifestPage(entries: [], throughSeq: 1, isFinal: false)
        let sealed = batch.sealed(checkpoint: nil)
        return try #require(sealed).records
    }

    @Test(arguments: [0, 1, 2, 3, 17, 1_000])
    func recordsGoInKeyTextOrderEachWhole(count: Int) throws {
        var generator = SplitMix64(seed: UInt64(count) + 1)
        let keys = (0..<count).map { _ in ItemKey.random(using: &generator) }
        let records = keys.map { Self.record($0) }
        let sorted = try Self.sealed([Array(records.prefix(count / 2)), Array(records.dropFirst(count / 2))])
        #expect(sorted.map(\.item.key.rawValue) == keys.map(\.rawValue).sorted())
        // Each record is the one made for its key, not another's moved under it.
        #expect(sorted.allSatisfy { $0.item.name == $0.item.key.rawValue })
    }

    /// Keys that differ only in their last digit, or only in their first, and hex letters
    /// against digits: the 128-bit order is the text order.
    @Test func theKeysValueOrdersAsItsText() throws {
        let texts = [
            "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF", "00000000-0000-4000-8000-000000000001",
            "00000000-0000-4000-8000-00000000000A", "00000000-0000-4000-8000-000000000009",
            "A0000000-0000-4000-8000-000000000000", "90000000-0000-4000-8000-000000000000",
            "00000000-0000-4000-8000-000000000000", "00000000-0001-4000-8000-000000000000",
        ]
        let keys = try texts.map { try ItemKey($0) }
        let sorted = try Self.sealed([keys.map { Self.record($0) }])
        #expect(sorted.map(\.item.key.rawValue) == texts.sorted())
    }

    /// A key held twice keeps its records in the order they came.
    @Test func equalKeysKeepTheirOrder() throws {
        let keys = (0..<3).map { _ in ItemKey.random() }
        let records = [
            Self.record(keys[0], stamp: 1), Self.record(keys[1]), Self.record(keys[0], stamp: 2),
            Self.record(keys[2]),
        ]
        let sorted = try Self.sealed([records])
        let stamps = sorted.filter { $0.item.key == keys[0] }.map(\.item.version.stamp.rawValue)
        #expect(stamps == [1, 2])
    }
}

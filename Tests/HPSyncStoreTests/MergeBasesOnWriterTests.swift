import CHPSyncSQLite
import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Issue 18: a sink between batches reads a small page's merge bases on the writer connection,
/// so the apply that follows finds those leaves in the writer's cache instead of reading them
/// from the file a second time.
@Suite struct MergeBasesOnWriterTests {
    let base: UInt64 = VersionStamp(milliseconds: 1_700_000_000_000).rawValue

    /// A store of 30,000 rows with 400-character names, written as a bulk pull writes them.
    private func storeOfThirtyThousand(_ dir: TempDirectory) throws -> (Store, [ItemKey]) {
        let store = try Fixtures.makeStore(dir)
        let keys = (0..<30_000).map { _ in ItemKey.random() }.sorted()
        try store.bulkApply {
            for chunk in stride(from: 0, to: keys.count, by: 10_000) {
                let records = keys[chunk..<chunk + 10_000].map {
                    IncomingRecord(
                        item: Fixtures.remoteItem(
                            $0, name: "first " + String(repeating: "x", count: 394), stamp: base + 1))
                }
                _ = try store.applyRemote(records, checkpoint: nil)
            }
        }
        return (store, keys)
    }

    private func writerCacheMisses(_ store: Store) throws -> Int32 {
        try store.database.writeWithoutTransaction { db in
            var current: Int32 = 0
            var highest: Int32 = 0
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, 0)
            return current
        }
    }

    private func cacheSize(_ store: Store) throws -> Int? {
        try store.database.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA cache_size") }
    }

    /// Reads `keys`' bases as a sink does, then applies an edit of each: the pages the apply
    /// had to read from the file.
    private func applyAfterReading(_ store: Store, _ keys: [ItemKey], applyingNext: Bool, stamp: UInt64) throws -> (
        misses: Int32, bases: [ItemKey: Item]
    ) {
        let bases = try store.mergeBases(keys, applyingNext: applyingNext)
        let before = try writerCacheMisses(store)
        let outcome = try store.applyRemote(
            keys.map { IncomingRecord(item: Fixtures.remoteItem($0, name: "edited", stamp: stamp)) }, checkpoint: nil,
            keepReplaced: true)
        #expect(outcome.updated.count == keys.count)
        return (try writerCacheMisses(store) - before, bases)
    }

    /// Each half measured on the store opened again, its caches empty; the rows' long names
    /// make the table (about 3,000 leaves) far larger than what 1,000 keys touch.
    @Test func aSmallBatchReadForItsApplyIsFoundInTheWritersCache() throws {
        let dir = TempDirectory()
        let (store, keys) = try storeOfThirtyThousand(dir)
        let shuffled = keys.shuffled()
        func measured(_ keys: [ItemKey], applyingNext: Bool) throws -> (misses: Int32, bases: [ItemKey: Item]) {
            let reopened = try Fixtures.reopen(store)
            return try reopened.bulkApply {
                let result = try applyAfterReading(reopened, keys, applyingNext: applyingNext, stamp: base + 2)
                #expect(try cacheSize(reopened) == Store.bulkWriterCache, "the batch gave the full cache back")
                return result
            }
        }
        let onReader = try measured(Array(shuffled[0..<1_000]).sorted(), applyingNext: false)
        let onWriter = try measured(Array(shuffled[1_000..<2_000]).sorted(), applyingNext: true)
        #expect(onReader.misses > 1_000, "\(onReader.misses) pages read by the apply after a reader's lookup")
        #expect(
            onWriter.misses * 3 < onReader.misses,
            "\(onWriter.misses) pages read after the writer's lookup, \(onReader.misses) after a reader's")
        #expect(onWriter.bases.count == 1_000 && onWriter.bases.values.allSatisfy { $0.name.hasPrefix("first") })
        #expect(onReader.bases.count == 1_000)
    }

    /// The bases are the same whichever connection reads them, tombstones and virtual ones too.
    @Test func theWriterReadsTheSameBasesAsAReader() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let live = ItemKey.random()
        let gone = ItemKey.random()
        let never = ItemKey.random()
        _ = try store.applyRemote(
            [
                IncomingRecord(item: Fixtures.remoteItem(live, name: "live", stamp: base + 1)),
                IncomingRecord(item: Fixtures.remoteItem(gone, stamp: base + 1, deleted: true)),
            ], checkpoint: nil)
        let keys = [live, gone, never]
        let onWriter = try store.mergeBases(keys, applyingNext: true)
        #expect(onWriter == (try store.mergeBases(keys)))
        #expect(onWriter[live]?.name == "live")
        #expect(onWriter[gone]?.deleted == true)
        #expect(onWriter[never] == nil)
    }

    /// A page larger than the limit is read on a reader: the writer's smaller cache of a bulk
    /// apply is left as it is, so a long pull's memory stays bounded.
    @Test func aLargePageIsReadOnAReader() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keys = (0...Store.mergeBasesOnWriterLimit).map { _ in ItemKey.random() }
        try store.bulkApply {
            _ = try store.mergeBases(keys, applyingNext: true)
            #expect(try cacheSize(store) == Store.bulkWriterCache)
            _ = try store.mergeBases(Array(keys.prefix(Store.mergeBasesOnWriterLimit)), applyingNext: true)
            #expect(try cacheSize(store) == Store.writerCache, "a page within the limit takes the full cache")
        }
    }
}

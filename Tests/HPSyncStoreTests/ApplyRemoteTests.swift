import CHPSyncSQLite
import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("applyRemote follows the merge rule")
struct ApplyRemoteTests {
    let base: UInt64 = VersionStamp(milliseconds: 1_700_000_000_000).rawValue

    /// A bulk apply of 20,000 records, four batches: returns the WAL's size in bytes at its end.
    private func bulkApplyTwentyThousand(_ store: Store, walBytes: () -> Int) throws -> Int {
        var grown = 0
        try store.bulkApply {
            for batch in 0..<4 {
                let records = (0..<5_000).map { i in
                    IncomingRecord(
                        item: Fixtures.remoteItem(ItemKey.random(), name: "item \(batch)-\(i)", stamp: base + UInt64(i))
                    )
                }
                _ = try store.applyRemote(records, checkpoint: nil)
            }
            grown = walBytes()
        }
        return grown
    }

    /// A bulk apply lets the WAL grow past the usual limit (here SQLite's own 1,000 pages)
    /// without a checkpoint, then folds it at its end and truncates the file: a later command
    /// does not read it whole again (SQLite rebuilds its index of the WAL in each process).
    @Test func aBulkApplyCheckpointsOnceAndTheWALShrinksAfter() throws {
        let dir = TempDirectory()
        var configuration = Fixtures.configuration
        configuration.walAutocheckpointPages = 1000
        let store = try Fixtures.makeStore(dir, configuration: configuration)
        let wal = store.directory.appendingPathComponent("store.sqlite-wal").path
        let walBytes = { (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0 }
        let grown = try bulkApplyTwentyThousand(store, walBytes: walBytes)
        #expect(grown > 4 << 20, "the WAL grew past 1,000 pages without a checkpoint (\(grown) bytes)")
        #expect(walBytes() == 0, "folded and truncated at the end of the bulk apply")
        _ = try store.add(ItemDraft(name: "after"))
        _ = try store.add(ItemDraft(name: "after that"))
        #expect(walBytes() <= 4 << 20)
        #expect(try store.status().items == 20_002)
    }

    /// Issue 18: within a bulk apply, a batch that rewrites rows the store has runs with the
    /// writer's full page cache: the pages it dirties stay in memory until its commit, none
    /// spilled to the WAL and read back (4,000 edits of 30,000 rows of 180-character names dirty
    /// more pages than the bulk apply's 4 MiB holds). Between batches the cache is the small one again, so a
    /// long pull's memory stays bounded, and after the bulk apply the usual one.
    @Test func aBatchThatRewritesRowsSpillsNoPageAndGivesTheCacheBack() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let onWriter = { (sql: String) in try store.database.writeWithoutTransaction { try Int.fetchOne($0, sql: sql) }
        }
        let writerSpills = {
            try store.database.writeWithoutTransaction { db -> Int32 in
                var current: Int32 = 0
                var highest: Int32 = 0
                sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_SPILL, &current, &highest, 0)
                return current
            }
        }
        let keys = (0..<30_000).map { _ in ItemKey.random() }.sorted()
        let edited = Array(keys.shuffled().prefix(4_000)).sorted()
        try store.bulkApply {
            for chunk in stride(from: 0, to: keys.count, by: 10_000) {
                let records = keys[chunk..<chunk + 10_000].map {
                    IncomingRecord(
                        item: Fixtures.remoteItem($0, name: String(repeating: "first ", count: 30), stamp: base + 1))
                }
                _ = try store.applyRemote(records, checkpoint: nil)
            }
            #expect(try onWriter("PRAGMA cache_size") == Store.bulkWriterCache)
            let before = try writerSpills()
            let outcome = try store.applyRemote(
                edited.map { IncomingRecord(item: Fixtures.remoteItem($0, name: "edited", stamp: base + 2)) },
                checkpoint: nil)
            #expect(outcome.updated.count == 4_000)
            #expect(try writerSpills() == before, "the edits' dirty pages were spilled mid-transaction")
            #expect(try onWriter("PRAGMA cache_size") == Store.bulkWriterCache)
        }
        #expect(try onWriter("PRAGMA cache_size") == Store.writerCache)
        #expect(try store.item(edited[0])?.name == "edited")
    }

    /// Issue 18: with the default limit (4,096 pages, 16 MiB) a WAL under it is left for a
    /// later commit to fold: a pull of a few thousand changes pays no checkpoint of its own.
    /// What it committed is there all the same, and the next open reads it.
    @Test func aWALUnderTheLimitIsLeftForALaterCommit() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        #expect(store.configuration.walAutocheckpointPages == 4096)
        let wal = store.directory.appendingPathComponent("store.sqlite-wal").path
        let walBytes = { (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0 }
        let grown = try bulkApplyTwentyThousand(store, walBytes: walBytes)
        #expect(grown > 4 << 20 && grown < 16 << 20, "\(grown) bytes")
        _ = try store.add(ItemDraft(name: "after"))
        _ = try store.add(ItemDraft(name: "after that"))
        #expect(walBytes() >= grown, "no checkpoint rewound the WAL")
        #expect(try Fixtures.reopen(store).status().items == 20_002)
    }

    @Test func newerWinsOlderIsIgnoredEqualIsNoOp() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let key = ItemKey.random()
        var outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, name: "v2", stamp: base))], checkpoint: nil)
        #expect(outcome.inserted == [key])
        outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, name: "old", stamp: base - 1))], checkpoint: nil)
        #expect(outcome.skipped == [key])
        let seq = try store.lastSeq
        outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, name: "v2", stamp: base))], checkpoint: nil)
        #expect(outcome.skipped == [key])
        #expect(try store.lastSeq == seq)
        // Same stamp, greater origin wins.
        let tie = Fixtures.remoteItem(key, name: "tie", stamp: base, origin: max(Fixtures.nodeA, Fixtures.nodeB))
        let lower = Fixtures.remoteItem(key, name: "low", stamp: base, origin: min(Fixtures.nodeA, Fixtures.nodeB))
        _ = try store.applyRemote([IncomingRecord(item: tie), IncomingRecord(item: lower)], checkpoint: nil)
        let expected = max(Fixtures.nodeA, Fixtures.nodeB) == Fixtures.nodeB ? "v2" : "tie"
        #expect(try store.item(key)?.name == expected)
        outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, name: "v3", stamp: base + 1))], checkpoint: nil)
        #expect(outcome.updated == [key])
        #expect(try store.item(key)?.name == "v3")
        #expect(try store.currentVersions([key])[key]?.seq == store.lastSeq)
    }

    @Test func tombstonesCompeteLikeEdits() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let key = ItemKey.random()
        var outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, stamp: base + 10, deleted: true))], checkpoint: nil)
        #expect(outcome.tombstonesRecorded == [key])
        outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, stamp: base + 5))], checkpoint: nil)
        #expect(outcome.skipped == [key])
        #expect(try store.item(key)?.deleted == true)
        outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, stamp: base + 20))], checkpoint: nil)
        #expect(outcome.inserted == [key])
        outcome = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(key, stamp: base + 30, deleted: true))], checkpoint: nil)
        #expect(outcome.deleted == [key])
    }

    @Test func clockGuardRefusesFutureStampsAndAppliesTheRest() throws {
        let dir = TempDirectory()
        let clock = TestClock(1_700_000_000_000)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let future = Fixtures.remoteItem(
            ItemKey.random(), stamp: VersionStamp(milliseconds: 1_700_000_000_000 + 11 * 60 * 1000).rawValue)
        let fine = Fixtures.remoteItem(
            ItemKey.random(), stamp: VersionStamp(milliseconds: 1_700_000_000_000 + 60_000).rawValue)
        let outcome = try store.applyRemote(
            [IncomingRecord(item: future), IncomingRecord(item: fine)], checkpoint: nil)
        #expect(outcome.refused.map(\.key) == [future.key])
        #expect(outcome.inserted == [fine.key])
        #expect(try store.item(future.key) == nil)
    }

    @Test func stagedImagesAreVerifiedAndPlaced() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let bytes = jpeg(3)
        let ref = Fixtures.ref(bytes)
        let bad = try store.stageImage(expected: ref)
        try (jpeg(4)).withUnsafeBytes { try bad.write($0) }
        #expect(throws: StoreError.self) { try bad.finish() }
        let over = try store.stageImage(expected: ImageRef(digest: ref.digest, size: 2))
        #expect(throws: StoreError.stagingOverflow(expected: 2)) { try bytes.withUnsafeBytes { try over.write($0) } }
        #expect(Fixtures.imageFiles(store).isEmpty)

        let staging = try store.stageImage(expected: ref)
        try bytes.withUnsafeBytes { try staging.write($0) }
        let staged = try staging.finish()
        let a = Fixtures.remoteItem(ItemKey.random(), stamp: base, image: ref)
        let b = Fixtures.remoteItem(ItemKey.random(), stamp: base, image: ref)
        let outcome = try store.applyRemote(
            [IncomingRecord(item: a, image: staged), IncomingRecord(item: b, image: staged)], checkpoint: nil)
        #expect(outcome.imagesWritten == 2)
        #expect(Fixtures.bytes(store.imageFileURL(for: a.key)) == bytes)
        #expect(Fixtures.bytes(store.imageFileURL(for: b.key)) == bytes)
        #expect(Fixtures.imageFiles(store).count == 2)
        // A name edit may come without the image when the local row already has it.
        var renamed = a
        renamed.name = "renamed"
        renamed.version.stamp = VersionStamp(rawValue: base + 1)
        #expect(try store.applyRemote([IncomingRecord(item: renamed)], checkpoint: nil).updated == [a.key])
        let copied = try store.stageImage(
            copying: try #require(try store.imageFile(withDigest: ref.digest)), expected: ref)
        copied.discard()
        #expect(try store.verify(repair: false).isClean)
    }

    @Test func checkpointCommitsWithTheBatchOrNotAtAll() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let peerStore = StoreID.random()
        let missingImage = Fixtures.remoteItem(ItemKey.random(), stamp: base, image: Fixtures.ref(jpeg()))
        let fine = Fixtures.remoteItem(ItemKey.random(), stamp: base)
        #expect(throws: StoreError.self) {
            try store.applyRemote(
                [IncomingRecord(item: fine), IncomingRecord(item: missingImage)],
                checkpoint: CheckpointUpdate(peerStore: peerStore, direction: .pull, seq: 42))
        }
        #expect(try store.checkpoint(peerStore: peerStore, direction: .pull) == 0)
        #expect(try store.item(fine.key) == nil)
        _ = try store.applyRemote(
            [IncomingRecord(item: fine)], checkpoint: CheckpointUpdate(peerStore: peerStore, direction: .pull, seq: 42))
        #expect(try store.checkpoint(peerStore: peerStore, direction: .pull) == 42)
        #expect(try store.checkpoint(peerStore: peerStore, direction: .push) == 0)
    }

    /// The last page of a pull that found nothing new: an empty batch whose checkpoint is where
    /// the store has it writes nothing; one that moves it, or raises the
    /// mark of stamps seen elsewhere, commits as before.
    @Test func anEmptyBatchThatChangesNothingWritesNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let peerStore = StoreID.random()
        // Rows the writer connection has changed since it opened.
        func changes() throws -> Int {
            try store.write { try Int.fetchOne($0, sql: "SELECT total_changes()") ?? 0 }
        }
        let at42 = CheckpointUpdate(peerStore: peerStore, direction: .pull, seq: 42)
        _ = try store.applyRemote([], checkpoint: at42)
        #expect(try store.checkpoint(peerStore: peerStore, direction: .pull) == 42)
        let before = try changes()
        _ = try store.applyRemote([], checkpoint: at42)
        _ = try store.applyRemote([], checkpoint: nil)
        #expect(try changes() == before, "the same checkpoint, no new stamp: nothing written")

        _ = try store.applyRemote([], checkpoint: CheckpointUpdate(peerStore: peerStore, direction: .pull, seq: 43))
        #expect(try store.checkpoint(peerStore: peerStore, direction: .pull) == 43)
        #expect(try changes() > before)
        let seen = VersionStamp(rawValue: base + 1000)
        _ = try store.applyRemote([], checkpoint: nil, observed: seen)
        #expect(try store.read { try MetaRecord.load($0) }.remoteMark == seen, "a higher mark is written")
    }

    @Test func recordsAndFeedRoundTrip() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let items = (0..<5).map { Fixtures.remoteItem(ItemKey.random(), stamp: base + UInt64($0)) }
        _ = try store.applyRemote(items.map { IncomingRecord(item: $0) }, checkpoint: nil)
        #expect(try store.records(items.map(\.key)) == items)
        let feed = try store.changes(after: 2, limit: 2)
        #expect(feed.map(\.seq) == [3, 4])
        #expect(feed.map(\.key) == [items[2].key, items[3].key])
    }
}

import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Records the sink found no row for (`IncomingRecord.likelyNew`) are inserted straight away;
/// the hint must never change what the merge rule decides, nor leave a gap in the change feed.
@Suite("A record hinted new is applied like any other")
struct LikelyNewApplyTests {
    let base: UInt64 = VersionStamp(milliseconds: 1_700_000_000_000).rawValue

    private func hinted(_ item: Item) -> IncomingRecord {
        var record = IncomingRecord(item: item)
        record.likelyNew = true
        return record
    }

    /// The store's last seq is its newest row's (no number taken without a row), and every
    /// number up to it is a row's when `everyOne` (no row was rewritten since).
    private func seqsAreContiguous(_ store: Store, everyOne: Bool = false) throws -> Bool {
        let last = try store.lastSeq
        let (count, top) = try store.read { db in
            try Row.fetchOne(db, sql: "SELECT count(*), max(seq) FROM item").map {
                ($0[0] as Int, ($0[1] as Int64?) ?? 0)
            }
                ?? (0, 0)
        }
        return top == last && (!everyOne || Int64(count) == top)
    }

    @Test func aKeyTheStoreDoesNotHaveIsInserted() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keys = (0..<50).map { _ in ItemKey.random() }.sorted()
        let outcome = try store.applyRemote(
            keys.map { hinted(Fixtures.remoteItem($0, name: "new", stamp: base)) }, checkpoint: nil)
        #expect(outcome.inserted == keys)
        #expect(try store.item(keys[0])?.name == "new")
        #expect(try seqsAreContiguous(store, everyOne: true))
    }

    /// A row that appeared after the sink read the page (another writer, or a key listed twice):
    /// older records are skipped, newer ones update it (its old version trashed), and neither
    /// takes a sequence number it does not use.
    @Test func aKeyTheStoreHasIsMergedAsUsual() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keys = (0..<6).map { _ in ItemKey.random() }.sorted()
        _ = try store.applyRemote(
            keys.map { IncomingRecord(item: Fixtures.remoteItem($0, name: "here", stamp: base)) }, checkpoint: nil)
        let before = try store.lastSeq

        let older = try store.applyRemote(
            keys.map { hinted(Fixtures.remoteItem($0, name: "older", stamp: base - 1)) }, checkpoint: nil)
        #expect(older.skipped == keys && older.inserted.isEmpty && older.updated.isEmpty)
        #expect(try store.lastSeq == before)
        #expect(try store.item(keys[0])?.name == "here")

        let fresh = ItemKey.random()
        let mixed = (keys + [fresh]).sorted().map { hinted(Fixtures.remoteItem($0, name: "newer", stamp: base + 1)) }
        let newer = try store.applyRemote(mixed, checkpoint: nil, keepReplaced: true)
        #expect(newer.updated == keys && newer.inserted == [fresh])
        #expect(try keys.allSatisfy { try store.item($0)?.name == "newer" })
        #expect(try store.trashEntries().count == keys.count, "the replaced versions went through the trash")
        #expect(try store.lastSeq == before + Int64(keys.count) + 1)
        #expect(try seqsAreContiguous(store))

        // A tombstone hinted new for a live key deletes it.
        let deletion = try store.applyRemote(
            [
                hinted(
                    Item.tombstone(
                        key: keys[0], version: Fixtures.remoteItem(keys[0], name: "", stamp: base + 2).version))
            ],
            checkpoint: nil)
        #expect(deletion.deleted == [keys[0]])
        #expect(try seqsAreContiguous(store))
    }

    /// A page may list a key twice (a broken or hostile source): both records come hinted new,
    /// the first is inserted and the second, failing its insert, meets that row by the merge rule.
    @Test func aKeyHintedNewTwiceInOneBatchMeetsItsFirstRow() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let newer = ItemKey.random()
        let older = ItemKey.random()
        let outcome = try store.applyRemote(
            [
                hinted(Fixtures.remoteItem(newer, name: "first", stamp: base)),
                hinted(Fixtures.remoteItem(newer, name: "second, newer", stamp: base + 1)),
                hinted(Fixtures.remoteItem(older, name: "first", stamp: base + 1)),
                hinted(Fixtures.remoteItem(older, name: "second, older", stamp: base)),
            ], checkpoint: nil)
        #expect(try store.item(newer)?.name == "second, newer")
        #expect(try store.item(older)?.name == "first")
        #expect(outcome.inserted == [newer, older] && outcome.updated == [newer] && outcome.skipped == [older])
        #expect(try store.lastSeq == 3)
        #expect(try seqsAreContiguous(store))
    }
}

import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Issue 18: `status` and the mass-deletion guard's base count from two partial indexes instead
/// of reading the whole item table. The counts must stay what a scan of the table says.
@Suite struct StatusCountTests {
    /// The counts by a scan of the table: what the indexes must agree with.
    private func scanned(_ store: Store) throws -> (items: Int, tombstones: Int, images: Int, imageBytes: Int64) {
        try store.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(deleted = 0), 0) AS items, COALESCE(SUM(deleted = 1), 0) AS tombstones,
                      COALESCE(SUM(deleted = 0 AND imageDigest IS NOT NULL), 0) AS images,
                      COALESCE(SUM(CASE WHEN deleted = 0 THEN imageSize ELSE 0 END), 0) AS imageBytes
                    FROM item NOT INDEXED
                    """)!
            return (row["items"], row["tombstones"], row["images"], row["imageBytes"])
        }
    }

    private func expectCountsMatchAScan(_ store: Store, _ comment: Comment) throws {
        let status = try store.status()
        let scan = try scanned(store)
        #expect(status.items == scan.items, comment)
        #expect(status.tombstones == scan.tombstones, comment)
        #expect(status.images == scan.images, comment)
        #expect(status.imageBytes == scan.imageBytes, comment)
        #expect(try store.liveItemCount() == scan.items, comment)
    }

    @Test func statusAndTheLiveCountMatchAScanThroughEditsDeletionsAndPulls() throws {
        let dir = TempDirectory()
        let clock = TestClock(1_750_000_000_000)
        let store = try Fixtures.makeStore(dir, clock: clock)
        try expectCountsMatchAScan(store, "an empty store")

        let photos = (1...3).map { jpeg(UInt8($0), size: 500 * $0) }
        var local: [Item] = []
        for index in 0..<6 {
            let image = index < 3 ? dir.file("\(index).jpg", photos[index]) : nil
            local.append(try store.add(ItemDraft(name: "Item \(index)", imageFile: image)))
        }
        try expectCountsMatchAScan(store, "six items, three with images")
        #expect(try store.status().items == 6)
        #expect(try store.status().images == 3)

        // A deleted item with an image leaves both counts; its tombstone is counted apart.
        _ = try store.delete([local[0].key, local[4].key])
        try expectCountsMatchAScan(store, "two deleted, one of them with an image")
        #expect(try store.status().tombstones == 2)
        #expect(try store.liveItemCount() == 4)

        // Pulled: a new live item with an image, a tombstone for a key never seen, one that
        // deletes a live item, and a live version that revives a deleted key.
        let stamp = VersionStamp(milliseconds: 1_750_000_000_000 + 60_000).rawValue
        let pulled = Fixtures.remoteItem(ItemKey.random(), stamp: stamp, image: Fixtures.ref(photos[2]))
        let staged = try store.stageImage(copying: dir.file("pulled.jpg", photos[2]), expected: Fixtures.ref(photos[2]))
        _ = try store.applyRemote(
            [
                IncomingRecord(item: pulled, image: staged),
                IncomingRecord(item: Fixtures.remoteItem(ItemKey.random(), stamp: stamp, deleted: true)),
                IncomingRecord(item: Fixtures.remoteItem(local[1].key, stamp: stamp, deleted: true)),
                IncomingRecord(item: Fixtures.remoteItem(local[4].key, name: "revived", stamp: stamp)),
            ], checkpoint: nil)
        try expectCountsMatchAScan(store, "after a pull")
        #expect(try store.liveItemCount() == 5)
        #expect(try store.status().tombstones == 3)
    }

    /// A store from before the indexes gets them when it is opened, and counts the same.
    @Test func aStoreFromBeforeTheCountIndexesGetsThemOnOpen() throws {
        let dir = TempDirectory()
        let old = try Fixtures.makeStore(dir)
        let photo = jpeg(9, size: 800)
        let kept = try store(old, adding: 4, imageFile: dir.file("kept.jpg", photo))
        _ = try old.delete([kept[0].key])
        try old.database.write { db in
            try db.execute(sql: "DROP INDEX item_tombstone; DROP INDEX item_live_image")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v9-count-indexes'")
        }

        let store = try Fixtures.reopen(old)
        let indexes = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'item'")
        }
        #expect(Set(indexes).isSuperset(of: ["item_tombstone", "item_live_image"]))
        try expectCountsMatchAScan(store, "a migrated store")
        #expect(try store.status().images == 3)
    }

    private func store(_ store: Store, adding count: Int, imageFile: URL) throws -> [Item] {
        try (0..<count).map { try store.add(ItemDraft(name: "Item \($0)", imageFile: imageFile)) }
    }
}

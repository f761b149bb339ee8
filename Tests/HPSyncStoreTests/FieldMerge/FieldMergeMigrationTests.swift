import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Issue 36: "the store migrates in place, keeping every item, the trash and the checkpoints".
@Suite struct FieldMergeMigrationTests {
    /// A store from before field merge (no field versions, no conflict table) opened by this
    /// version keeps every item, the trash and its checkpoints, verifies clean, and merges its
    /// next edit per field.
    @Test func aStoreFromBeforeFieldMergeMigratesInPlaceKeepingEverything() throws {
        let dir = TempDirectory()
        let old = try Fixtures.makeStore(dir)
        var draft = ItemDraft(name: "Guitar", valueInDollars: 900)
        draft.imageFile = try dir.file("guitar.jpg", jpeg(3, size: 900))
        let guitar = try old.add(draft)
        _ = try old.add(ItemDraft(name: "Amp", valueInDollars: 300))
        let radio = try old.add(ItemDraft(name: "Old radio", valueInDollars: 20))
        _ = try old.delete([radio.key], keepInTrash: true)
        let peer = StoreID.random()
        try old.setCheckpoint(CheckpointUpdate(peerStore: peer, direction: .pull, seq: 42))
        try old.setCheckpoint(CheckpointUpdate(peerStore: peer, direction: .push, seq: 7))
        let items = try old.items(includeDeleted: true)
        let trash = try old.trashEntries()
        #expect(items.count == 3 && trash.count == 1)
        // The schema before v12-field-merge.
        try old.database.write { db in
            try db.execute(
                sql: """
                    DROP TABLE itemFields; DROP TABLE conflict;
                    ALTER TABLE item DROP COLUMN fields; ALTER TABLE blindMirror DROP COLUMN mergeDigest;
                    DELETE FROM grdb_migrations WHERE identifier = 'v12-field-merge'
                    """)
        }

        let store = try Fixtures.reopen(old)
        #expect(try store.items(includeDeleted: true) == items)
        #expect(try store.trashEntries() == trash)
        #expect(try store.checkpoint(peerStore: peer, direction: .pull) == 42)
        #expect(try store.checkpoint(peerStore: peer, direction: .push) == 7)
        #expect(try store.verify(repair: false).isClean)
        #expect(try store.conflicts().isEmpty)
        let edited = try store.edit(guitar.key, ItemEdit(name: "Guitar, restrung"))
        let state = try #require(try store.mergeState(guitar.key))
        #expect(state.name.version == edited.version)
        #expect(state.valueInDollars.version == guitar.version, "the value keeps the version that set it")
    }
}

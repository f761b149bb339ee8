import Foundation
import GRDB
import HPSyncModel

extension ItemRecord {
    /// The row's item, with its merge state and joined flag when the row has field versions
    /// (what a sink joins with, Protocol.md 5.9); a whole record reads as before.
    func itemWithMergeState(_ db: Database, origins: inout OriginCache) throws -> Item {
        var item = try item(origins: &origins)
        if fields != nil {
            item.mergeState = try Store.mergeState(db, self)
            item.joined = joined
        }
        return item
    }

    /// The row's item with its merge state in the compact form, unread (what a source sends:
    /// the stored body goes to the wire as it is, Protocol.md 5.9 "The fields bytes").
    func itemWithMergeFields(_ db: Database, origins: inout OriginCache) throws -> Item {
        var item = try item(origins: &origins)
        guard fields != nil else { return item }
        item.mergeFields = try stored(db, item).compact()
        return item
    }

    /// Whether the row's state is joined (Protocol.md 5.9 "Older peers").
    var joined: Bool { StoredMergeState.isJoined(fields) }

    /// The merge digest of the row's state, as stored (Protocol.md 5.9); 0 for a whole record.
    var mergeDigest: UInt64 { StoredMergeState.mergeDigest(fields) }

    /// The row, its `fields` and its conflict rows (read only when `fields` says there are some).
    func stored(_ db: Database, _ item: Item) throws -> StoredMergeState {
        let conflicts =
            StoredMergeState.hasConflictRows(fields) ? try ConflictRecord.fetchAll(db, key: item.key) : []
        return StoredMergeState(item: item, fields: fields, conflicts: conflicts)
    }
}

/// Reading and writing items' merge states (`ItemMergeState`, stored as `StoredMergeState`).
extension Store {
    /// The merge state of `key`, or nil when the store has no row for it.
    package func mergeState(_ key: ItemKey) throws -> ItemMergeState? {
        try read { db in try ItemRecord.fetch(db, key: key).map { try Self.mergeState(db, $0) } }
    }

    /// The open conflicts of live items, by key, field and losing version.
    package func conflicts() throws -> [FieldConflict] {
        try read { db in
            let rows = try ItemRecord.fetchAll(
                db,
                sql: """
                    SELECT \(ItemRecord.selection) FROM item WHERE deleted = 0 AND key IN (SELECT DISTINCT key FROM conflict) ORDER BY key
                    """)
            return try rows.flatMap { try Self.mergeState(db, $0).conflicts }
        }
    }

    /// The bytes of a photo that lost a clash (or any photo with `digest` this store holds):
    /// an item's file, else the trash folder's copy; nil when neither has them.
    package func conflictPhotoFile(_ digest: SHA256Digest) throws -> URL? {
        if let live = try imageFile(withDigest: digest) { return live }
        let ref = try read { db in
            try Int64.fetchOne(
                db, sql: "SELECT imageSize FROM conflict WHERE imageDigest = ? LIMIT 1", arguments: [Data(digest.bytes)]
            )
        }.map { ImageRef(digest: digest, size: $0) }
        guard let ref, trashImages.isIntact(ref) else { return nil }
        return URL(fileURLWithPath: trashImages.path(digest))
    }

    /// How many conflicts of live items are open.
    package func conflictCount() throws -> Int {
        try read { db in try Self.conflictCount(db) }
    }

    static func conflictCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM conflict JOIN item USING (key) WHERE item.deleted = 0") ?? 0
    }

    /// The merge state of the item `row` holds.
    static func mergeState(_ db: Database, _ row: ItemRecord) throws -> ItemMergeState {
        try row.stored(db, row.item()).state()
    }

    /// The state of `row`'s item after a local delete at `version`: a tombstone that keeps the
    /// fields (and the photo field) a later revival brings back.
    static func locallyDeleted(_ db: Database, _ row: ItemRecord, at version: Version) throws -> ItemMergeState {
        var state = try mergeState(db, row)
        do {
            try state.delete(at: version)
        } catch {
            throw StoreError.database("item \(row.key): \(error)")
        }
        return state
    }

    /// The state of `item.key` after a local change that sets the fields `edit` names to
    /// `item`'s values at `item.version`: each resolves its field's conflicts; the others keep
    /// their versions. No row (a new key) makes a whole record; a tombstone comes back to life.
    static func locallyEdited(_ db: Database, _ row: ItemRecord?, item: Item, edit: FieldEdit) throws
        -> ItemMergeState
    {
        guard let row else { return ItemMergeState(record: item) }
        var state = try mergeState(db, row)
        do {
            try state.apply(row.deleted ? FieldEdit(settingAllOf: item) : edit, at: item.version)
        } catch {
            throw StoreError.database("item \(item.key): \(error)")
        }
        return state
    }

    /// Writes `state` as its key's row with `seq`, and its conflicts in place of those of
    /// `previous` (the row it replaces, if any). Returns the row written. A local change is
    /// never joined: its contents are the record its version makes.
    @discardableResult
    static func writeMergeState(_ db: Database, _ state: ItemMergeState, seq: Int64, previous: ItemRecord?) throws
        -> ItemRecord
    {
        let stored = StoredMergeState(state)
        let row = ItemRecord(stored.item, seq: seq, fields: stored.fields)
        try row.write(db)
        if previous?.fields != nil { try ConflictRecord.deleteAll(db, key: state.key) }
        for conflict in stored.conflicts { try conflict.insert(db) }
        return row
    }
}

import GRDB
import HPSyncModel

/// The merge rule's read side: the local versions a batch of incoming versions must beat.
extension Store {
    /// This store's rows of `keys` (tombstones included) and, for keys it has no row for, the
    /// virtual tombstone below its GC horizon: the versions an incoming change must beat.
    ///
    /// `applyingNext`: the caller applies these keys next and has no write in flight (a sink
    /// between batches, outside a bulk pull). Up to `mergeBasesOnWriterLimit` keys are then
    /// read on the writer connection (`readOnWriter`), whose apply reads the same leaves again:
    /// an incremental pull at M (1,110 keys) read about 1,000 pages fewer. More keys than that
    /// would not fit beside the apply's own pages in the writer's cache, and are read on a
    /// reader as before.
    package func mergeBases(_ keys: [ItemKey], applyingNext: Bool = false) throws -> [ItemKey: Item] {
        if applyingNext && keys.count <= Self.mergeBasesOnWriterLimit {
            return try readOnWriter { db in try mergeBases(db, keys) }
        }
        return try read { db in try mergeBases(db, keys) }
    }

    /// Keys `mergeBases(_:applyingNext:)` reads on the writer at most: each costs a leaf of the
    /// key index and one of the table, about 1.6 pages of the writer's 5,120.
    static let mergeBasesOnWriterLimit = 2_000

    private func mergeBases(_ db: Database, _ keys: [ItemKey]) throws -> [ItemKey: Item] {
        let virtual = try MetaRecord.load(db).gcHorizon.virtualTombstone
        let rows = try ItemRecord.fetchMany(db, keys: keys)
        var result: [ItemKey: Item] = [:]
        result.reserveCapacity(keys.count)
        var origins = OriginCache()
        for key in keys {
            if let row = rows[key.rawValue] {
                result[key] = try row.itemWithMergeState(db, origins: &origins)
            } else if let virtual {
                result[key] = Item.tombstone(key: key, version: virtual)
            }
        }
        return result
    }
}

import HPSyncModel
import HPSyncStore

/// How `importHomepwner` treats what the store has no field for, and whether it writes.
public struct HomepwnerImportOptions: Sendable {
    /// What to do with the Core Data edition's asset type label.
    public enum AssetType: String, Sendable, CaseIterable {
        /// Append it to the name as `Name [Label]`, so it survives in every copy of the inventory.
        case name
        /// Leave it out (the report still counts the labels left out).
        case ignore
    }

    public var assetType: AssetType
    /// Plan and report, but write nothing.
    public var dryRun: Bool
    /// Items per write transaction (tests lower it to span several).
    var batchSize = Store.homepwnerBatchSize

    public init(assetType: AssetType = .name, dryRun: Bool = false) {
        self.assetType = assetType
        self.dryRun = dryRun
    }
}

/// What an import of a Homepwner folder did (or, in a dry run, would do).
public struct HomepwnerImportReport: Sendable {
    public var sources: [HomepwnerFolder.Source]
    /// Inserted and updated keys, images written (all planned, in a dry run).
    public var changes: ChangeSet {
        ChangeSet(
            inserted: Array(inserted), updated: Array(updated), imagesWritten: imagesWritten, imageBytes: imageBytes)
    }
    /// `changes` as it is kept: a 1,000,000-item import lists every key as inserted or unchanged.
    public var inserted = ItemKeyList()
    public var updated = ItemKeyList()
    public var imagesWritten = 0
    public var imageBytes: Int64 = 0
    /// Items the store already had with the same contents.
    public var unchanged = ItemKeyList()
    /// Items deleted in this store, left deleted: a re-import must not undo a deletion (nor can
    /// it after `gc` dropped the tombstone: the store remembers the collected keys).
    public var skippedDeleted = ItemKeyList()
    /// Items without an image file in the folder (a store image is never removed for that).
    public var keysWithoutImage: ItemKeyList
    /// How many items carried a Core Data asset type label, and what was done with them.
    public var assetTypeLabels: Int
    public var assetType: HomepwnerImportOptions.AssetType
    public var dryRun: Bool
}

import HPSyncModel

// What goes into a remote apply (`RemoteApply`) and what comes out of it.

/// A record received from a peer (or an import), with its image bytes already staged.
package struct IncomingRecord: Sendable {
    package var item: Item
    /// The staged bytes of `item.image`; nil when the item has no image, or when this store's
    /// row for the key already names the same image.
    package var image: StagedImage? {
        get { staged?.image }
        set { staged = newValue.map(StagedBox.init) }
    }
    /// An import without its images: the row names `item.image` but no bytes came. The store
    /// records the image as missing (remembered for healing) instead of refusing the record.
    package var imageMissing = false
    /// The sink found no row for the key when it read the page: the apply then inserts the row
    /// straight away (the key's uniqueness check is its lookup) instead of first looking for a
    /// row to merge with. Only a hint: a row that appeared meanwhile fails the insert, and the
    /// record then takes the usual way.
    package var likelyNew = false
    /// The record joins the store's state field by field (protocol version 5, `ItemMergeState`);
    /// false for a peer that merges whole records: it replaces the store's version only when
    /// newer, as before field merge.
    package var joinsFields = false
    /// An import row that named no version, stamped here (`reserveLocalStamps`): a local edit
    /// of the fields it changes, each on the store's own version of that field (Protocol.md
    /// 5.9 "Local edits"), rather than a whole record whose unknown bases would make it dominate
    /// a concurrent edit of another field made elsewhere. A deleted item it revives takes every
    /// field from it, each on the field's version the deletion kept.
    package var isLocalEdit = false
    /// With `joinsFields`, the record's merge state when it says more than the record (nil for
    /// a whole record, which joins as one). Setting it sets `joinsFields`.
    package var mergeState: ItemMergeState? {
        get { merge?.state }
        set {
            merge = newValue.map(MergeBox.init)
            if newValue != nil { joinsFields = true }
        }
    }
    /// Behind a reference: most records have no image, and a batch holds up to 20,000 records,
    /// two batches at once (one gathering, one committing). Inline, the staged image made each
    /// record about 50 bytes larger, whether it had one or not.
    private var staged: StagedBox?
    /// Behind a reference for the same reason.
    private var merge: MergeBox?

    package init(item: Item, image: StagedImage? = nil) {
        self.item = item
        self.image = image
    }

    private final class StagedBox: Sendable {
        let image: StagedImage
        init(_ image: StagedImage) { self.image = image }
    }

    private final class MergeBox: Sendable {
        let state: ItemMergeState
        init(_ state: ItemMergeState) { self.state = state }
    }
}

/// Where a sync session got to, committed with the batch that got it there.
package struct CheckpointUpdate: Sendable, Hashable {
    package var peerStore: StoreID
    package var direction: SyncDirection
    package var seq: Int64

    package init(peerStore: StoreID, direction: SyncDirection, seq: Int64) {
        self.peerStore = peerStore
        self.direction = direction
        self.seq = seq
    }
}

/// A received record that was not applied, and why.
package struct RefusedRecord: Sendable, Hashable {
    package var key: ItemKey
    package var reason: String

    package init(key: ItemKey, reason: String) {
        self.key = key
        self.reason = reason
    }
}

/// What `applyRemote` did with a batch.
package struct ApplyOutcome: Sendable, Hashable {
    package var inserted: [ItemKey] = []
    package var updated: [ItemKey] = []
    package var deleted: [ItemKey] = []
    /// The part of `deleted` a full reconciliation deleted: live here, absent from the source's
    /// listing and older than its GC horizon.
    package var reconciled: [ItemKey] = []
    /// Tombstones stored for keys that had no live item here (they still propagate).
    package var tombstonesRecorded: [ItemKey] = []
    /// Records whose version did not beat the local one.
    package var skipped: [ItemKey] = []
    package var refused: [RefusedRecord] = []
    package var imagesWritten: Int = 0
    package var imageBytes: Int64 = 0
    /// Items applied with their image recorded as missing (an import without its images).
    package var imagesMissing: [ItemKey] = []

    package init() {}

    /// The same outcome as a change set, for reporting.
    package var changeSet: ChangeSet {
        var changes = ChangeSet(
            inserted: inserted, updated: updated, deleted: deleted, imagesWritten: imagesWritten,
            imageBytes: imageBytes)
        changes.imagesMissing = imagesMissing
        return changes
    }
}

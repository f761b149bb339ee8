import Foundation
import HPSyncCrypto
import HPSyncModel

/// What a batch of local changes or an import did.
public struct ChangeSet: Sendable, Codable, Hashable {
    public var inserted: [ItemKey]
    public var updated: [ItemKey]
    public var deleted: [ItemKey]
    public var imagesWritten: Int
    public var imageBytes: Int64
    /// Items whose image was recorded as missing (an import without its images; see
    /// `Store.imagesToHeal`).
    public var imagesMissing: [ItemKey] = []
    /// Images an import found in its `--images` directory but did not take (their bytes are not
    /// the record's); each is also in `imagesMissing`.
    public var imagesRefused: [ImageLeftOut] = []

    package init(
        inserted: [ItemKey] = [], updated: [ItemKey] = [], deleted: [ItemKey] = [], imagesWritten: Int = 0,
        imageBytes: Int64 = 0
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.imagesWritten = imagesWritten
        self.imageBytes = imageBytes
    }

    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    package mutating func formUnion(_ other: ChangeSet) {
        inserted += other.inserted
        updated += other.updated
        deleted += other.deleted
        imagesWritten += other.imagesWritten
        imageBytes += other.imageBytes
        imagesMissing += other.imagesMissing
        imagesRefused += other.imagesRefused
    }
}

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
    /// Behind a reference: most records have no image, and a batch holds up to 20,000 records,
    /// two batches at once (one gathering, one committing). Inline, the staged image made each
    /// record about 50 bytes larger, whether it had one or not.
    private var staged: StagedBox?

    package init(item: Item, image: StagedImage? = nil) {
        self.item = item
        self.image = image
    }

    private final class StagedBox: Sendable {
        let image: StagedImage
        init(_ image: StagedImage) { self.image = image }
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

/// Counts shown by `hp-sync status`.
public struct StoreStatus: Sendable, Hashable, Codable {
    public var items: Int
    public var tombstones: Int
    public var images: Int
    public var imageBytes: Int64
    public var lastSeq: Int64
    public var peers: Int
}

/// A new item, as the CLI or an API caller describes it.
public struct ItemDraft: Sendable {
    /// nil makes a random key.
    public var key: ItemKey?
    public var name: String
    public var serialNumber: String?
    public var valueInDollars: Int64
    /// nil uses the current time.
    public var dateCreatedMilliseconds: Int64?
    public var imageFile: URL?

    public init(
        key: ItemKey? = nil, name: String, serialNumber: String? = nil, valueInDollars: Int64 = 0,
        dateCreatedMilliseconds: Int64? = nil, imageFile: URL? = nil
    ) {
        self.key = key
        self.name = name
        self.serialNumber = serialNumber
        self.valueInDollars = valueInDollars
        self.dateCreatedMilliseconds = dateCreatedMilliseconds
        self.imageFile = imageFile
    }
}

/// What to do with a serial number in an edit.
public enum SerialChange: Sendable, Hashable {
    case keep
    case set(String)
    case clear
}

/// Changes to an item's fields; nil and `.keep` leave a field as it is.
public struct ItemEdit: Sendable {
    public var name: String?
    public var serialNumber: SerialChange
    public var valueInDollars: Int64?

    public init(name: String? = nil, serialNumber: SerialChange = .keep, valueInDollars: Int64? = nil) {
        self.name = name
        self.serialNumber = serialNumber
        self.valueInDollars = valueInDollars
    }
}

/// A page of the change feed as a source sends it (`Store.feedPage(after:limit:)`).
package struct FeedPage: Sendable {
    package var entries: [ChangeEntry]
    /// The current record of each live entry.
    package var records: [ItemKey: Item]
    /// The feed's last seq in the same snapshot.
    package var lastSeq: Int64
    /// When asked for (`feedPage(after:limit:counting:)`): what `feedCounts(after:)` would say
    /// for the same start, in the same snapshot.
    package var counts: FeedCounts?
}

/// How many feed entries come after a seq, how many of them are tombstones, and the bytes of
/// the live ones' images (`Store.feedCounts(after:)`).
package struct FeedCounts: Sendable, Equatable {
    package var entries: Int64
    package var tombstones: Int64
    package var imageBytes: Int64
}

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

/// Counts shown by `hp-sync status`.
public struct StoreStatus: Sendable, Hashable, Codable {
    public var items: Int
    public var tombstones: Int
    public var images: Int
    public var imageBytes: Int64
    public var lastSeq: Int64
    public var peers: Int
    /// Open conflicts of live items: values that lost a clash, until an edit resolves them.
    /// `package` as the conflicts API is (`Store.conflicts()`): the CLI and the web app read it.
    package var conflicts: Int
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

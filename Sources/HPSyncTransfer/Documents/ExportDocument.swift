import HPSyncCrypto
import HPSyncModel
import HPSyncStore

/// The JSON export format (`"format": "hp-sync-export", "version": 1`): lossless, so that
/// importing it into any store reproduces keys, dates, digests, versions and tombstones.
struct ExportDocument: Codable {
    static let formatName = "hp-sync-export"
    static let currentVersion = 1

    var format: String
    var version: Int
    var storeID: String?
    var nodeID: String?
    var items: [ExportedItem]
}

/// One item of an export. Tombstones carry only key, version and `deleted`; records without a
/// version (hand-written imports) are applied as local changes.
struct ExportedItem: Codable {
    struct Image: Codable {
        var sha256: SHA256Digest
        var size: Int64
    }

    var key: ItemKey
    var name: String?
    var serialNumber: String?
    var valueInDollars: Int64?
    var dateCreated: String?
    var dateCreatedMilliseconds: Int64?
    var image: Image?
    var stamp: UInt64?
    var origin: NodeID?
    var deleted: Bool?
    /// The exporting store did not hold this image intact, so `export --images` left its file
    /// out on purpose: an import records it as missing instead of refusing the directory.
    var imageMissing: Bool?

    init(key: ItemKey) { self.key = key }

    init(_ item: Item) {
        key = item.key
        stamp = item.version.stamp.rawValue
        origin = item.version.origin
        deleted = item.deleted
        guard !item.deleted else { return }
        name = item.name
        serialNumber = item.serialNumber
        valueInDollars = item.valueInDollars
        dateCreated = DateText.iso8601(milliseconds: item.dateCreatedMilliseconds)
        dateCreatedMilliseconds = item.dateCreatedMilliseconds
        image = item.image.map { Image(sha256: $0.digest, size: $0.size) }
    }

    /// The version this record carries, if it names one.
    var versionValue: Version? {
        guard let stamp, let origin else { return nil }
        return Version(stamp: VersionStamp(rawValue: stamp), origin: origin)
    }

    /// The item at `version`; throws when a live record lacks what an item needs.
    func item(version: Version) throws -> Item {
        if deleted == true { return Item.tombstone(key: key, version: version) }
        guard let name else { throw StoreError.invalidImport("item \(key) has no name") }
        let milliseconds: Int64
        if let dateCreatedMilliseconds {
            milliseconds = dateCreatedMilliseconds
        } else if let text = dateCreated {
            guard let parsed = DateText.parse(text) else {
                throw StoreError.invalidImport("item \(key) has an unreadable dateCreated '\(text)'")
            }
            milliseconds = parsed
        } else {
            throw StoreError.invalidImport("item \(key) has no dateCreated")
        }
        return Item(
            key: key, name: name, serialNumber: serialNumber, valueInDollars: valueInDollars ?? 0,
            dateCreatedMilliseconds: milliseconds, image: image.map { ImageRef(digest: $0.sha256, size: $0.size) },
            version: version)
    }
}

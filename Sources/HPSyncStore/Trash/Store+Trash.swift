import Foundation
import GRDB
import HPSyncCrypto

/// A version a pull deleted or overwrote, as `hp-sync trash list` shows it.
public struct TrashEntry: Sendable, Equatable {
    public enum Reason: String, Sendable { case deleted, overwritten }

    public var id: Int64
    public var key: ItemKey
    public var name: String
    public var serialNumber: String?
    public var valueInDollars: Int64
    public var dateCreatedMilliseconds: Int64
    public var image: ImageRef?
    public var reason: Reason
    /// Milliseconds since 1970.
    public var trashedAt: Int64
}

/// The backup's trash: what pulls deleted or overwrote stays restorable for a retention period,
/// so a mistake on the source (or a sync of one) can be undone on the backup.
///
/// A trashed version's row is written in the pull's own transaction, and its image is hard-
/// linked into `trash/<SHA-256 hex>` before the pull replaces or unlinks `images/<KEY>`.
extension Store {
    var trashDirectory: URL { directory.appendingPathComponent("trash", isDirectory: true) }

    /// Keeps (or stops keeping) the versions that `applyRemote` deletes or overwrites.
    public func keepReplacedVersions(_ keep: Bool) {
        keepsReplacedVersions.set(keep)
    }

    /// Called inside `applyRemote`'s transaction for a live local version about to be replaced.
    func trash(_ db: Database, _ local: ItemRecord, deleted: Bool, now: UInt64) throws {
        if let digest = local.imageDigest {
            let target = trashDirectory.appendingPathComponent(Self.hex(digest))
            if !FileManager.default.fileExists(atPath: target.path) {
                try? FileManager.default.createDirectory(at: trashDirectory, withIntermediateDirectories: true)
                // A missing source (an image never received) leaves a row without bytes.
                _ = link(images.url.appendingPathComponent(local.key).path, target.path)
            }
        }
        var record = TrashRecord(
            id: nil, key: local.key, name: local.name, serialNumber: local.serialNumber,
            valueInDollars: local.valueInDollars, dateCreated: local.dateCreated, imageDigest: local.imageDigest,
            imageSize: local.imageSize, stamp: local.stamp, origin: local.origin,
            reason: deleted ? TrashEntry.Reason.deleted.rawValue : TrashEntry.Reason.overwritten.rawValue,
            trashedAt: Int64(now))
        try record.insert(db)
    }

    /// Trash entries, newest first; only those of `key` when given.
    public func trashEntries(key: ItemKey? = nil) throws -> [TrashEntry] {
        try read { db in
            var request = TrashRecord.order(TrashRecord.Columns.trashedAt.desc, TrashRecord.Columns.id.desc)
            if let key { request = request.filter(TrashRecord.Columns.key == key.rawValue) }
            return try request.fetchAll(db).compactMap(Self.entry)
        }
    }

    /// Restores the newest trashed version of `key` (or entry `id`) as a new local edit, which
    /// then syncs like any other. Returns the item as restored.
    public func restoreFromTrash(key: ItemKey?, id: Int64? = nil) throws -> Item {
        let entries = try trashEntries(key: key)
        guard let entry = id.map({ id in entries.first { $0.id == id } }) ?? entries.first else {
            throw StoreError.notInTrash(key?.rawValue ?? "#\(id ?? 0)")
        }
        var imageFile: URL?
        if let image = entry.image {
            let file = trashDirectory.appendingPathComponent(image.digest.hex)
            guard FileManager.default.fileExists(atPath: file.path) else {
                throw StoreError.missingImageFile(path: file.path)
            }
            imageFile = file
        }
        let current = try item(entry.key)
        if let current, !current.deleted {
            var change = ItemEdit()
            change.name = entry.name
            change.serialNumber = entry.serialNumber.map { .set($0) } ?? .clear
            change.valueInDollars = entry.valueInDollars
            var restored = try edit(entry.key, change)
            if let imageFile, current.image != entry.image {
                restored = try setImage(entry.key, from: imageFile)
            } else if imageFile == nil, current.image != nil {
                restored = try removeImage(entry.key)
            }
            return restored
        }
        return try add(
            ItemDraft(
                key: entry.key, name: entry.name, serialNumber: entry.serialNumber,
                valueInDollars: entry.valueInDollars, dateCreatedMilliseconds: entry.dateCreatedMilliseconds,
                imageFile: imageFile))
    }

    /// Drops entries trashed more than `age` milliseconds ago (all with 0), and image files no
    /// entry names any more. Returns how many entries went.
    @discardableResult
    public func purgeTrash(olderThanMilliseconds age: Int64) throws -> Int {
        let cutoff = Int64(clock.nowMilliseconds()) - age
        let (removed, kept) = try write { db -> (Int, Set<String>) in
            let removed = try TrashRecord.filter(TrashRecord.Columns.trashedAt <= cutoff).deleteAll(db)
            let digests = try Data.fetchAll(
                db, TrashRecord.select(TrashRecord.Columns.imageDigest).filter(TrashRecord.Columns.imageDigest != nil))
            return (removed, Set(digests.map(Self.hex)))
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: trashDirectory.path)) ?? []
        for name in files where !kept.contains(name) {
            _ = FileIO.unlinkIfPresent(trashDirectory.appendingPathComponent(name).path)
        }
        return removed
    }

    private static func entry(_ record: TrashRecord) -> TrashEntry? {
        guard let id = record.id, let key = try? ItemKey(record.key),
            let reason = TrashEntry.Reason(rawValue: record.reason)
        else { return nil }
        var image: ImageRef?
        if let digest = record.imageDigest.flatMap({ SHA256Digest(bytes: Array($0)) }), let size = record.imageSize {
            image = ImageRef(digest: digest, size: size)
        }
        return TrashEntry(
            id: id, key: key, name: record.name, serialNumber: record.serialNumber,
            valueInDollars: record.valueInDollars, dateCreatedMilliseconds: record.dateCreated, image: image,
            reason: reason, trashedAt: record.trashedAt)
    }

    /// The trash file name of a digest column: the digest's hex, as `SHA256Digest.hex` writes it.
    private static func hex(_ data: Data) -> String {
        SHA256Digest(bytes: Array(data))?.hex ?? data.map { String(format: "%02x", $0) }.joined()
    }
}

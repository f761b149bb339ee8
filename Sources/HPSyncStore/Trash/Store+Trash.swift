import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// A version a pull or a received push deleted or overwrote, as `hp-sync trash list` shows it.
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
/// A trashed version's row is written in the pull's own transaction, and its image is copied
/// into `trash/<SHA-256 hex>` (`TrashImages`: an independent, fsynced copy, never a hard link)
/// before that transaction commits, so before the pull replaces or unlinks `images/<KEY>`.
extension Store {
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
    ///
    /// One transaction writes the whole version (name, serial number, value, creation date and
    /// image) with one stamp and seq, following the image journal: the trashed image is copied
    /// to a temporary, checked against its digest and fsynced before the row commits, and renamed
    /// into place after; a version without an image unlinks the current one after the commit.
    public func restoreFromTrash(key: ItemKey?, id: Int64? = nil) throws -> Item {
        let entries = try trashEntries(key: key)
        guard let entry = id.map({ id in entries.first { $0.id == id } }) ?? entries.first else {
            throw StoreError.notInTrash(key?.rawValue ?? "#\(id ?? 0)")
        }
        let staged = try entry.image.map { image in
            let file = trashDirectory.appendingPathComponent(image.digest.hex)
            guard FileIO.exists(file.path) else { throw StoreError.missingImageFile(path: file.path) }
            // Not validated as an image: a pulled image was checked by its digest only.
            let copy = try images.writeTemp(copying: file, maxBytes: configuration.maxImageBytes, validate: false)
            guard copy.ref == image else {
                FileIO.unlinkIfPresent(images.tempPath(copy.name))
                throw StoreError.io(
                    path: file.path,
                    reason: "the trashed image no longer matches the SHA-256 it was kept with; "
                        + "restore another entry with --id")
            }
            return copy
        }
        var dropped: String?
        let restored = try commitLocal(key: entry.key, image: staged, fields: nil) { db, clock in
            if staged == nil { dropped = try ImageJournal(db).drop(key: entry.key) }
            return Item(
                key: entry.key, name: entry.name, serialNumber: entry.serialNumber,
                valueInDollars: entry.valueInDollars, dateCreatedMilliseconds: entry.dateCreatedMilliseconds,
                image: entry.image, version: Version(stamp: clock.nextLocalStamp(), origin: nodeID))
        }
        if staged == nil { try unlinkImagesIfUnused([entry.key], temporaries: dropped.map { [$0] } ?? []) }
        return restored
    }

    /// Drops entries trashed more than `age` milliseconds ago (all with 0), and image files no
    /// entry names any more. Returns how many entries went.
    @discardableResult
    public func purgeTrash(olderThanMilliseconds age: Int64) throws -> Int {
        let cutoff = Int64(clock.nowMilliseconds()) - age
        // The files are listed and unlinked inside the transaction: a serving process applies
        // pushes while it purges, and an image linked into the trash by an apply whose row is
        // not committed yet must not be taken for an orphan.
        return try write { db -> Int in
            let removed = try TrashRecord.filter(TrashRecord.Columns.trashedAt <= cutoff).deleteAll(db)
            let digests = try Data.fetchAll(
                db, TrashRecord.select(TrashRecord.Columns.imageDigest).filter(TrashRecord.Columns.imageDigest != nil))
            // The losing photos of open conflicts are kept there too (`RemoteApply`).
            let losing = try Data.fetchAll(db, sql: "SELECT imageDigest FROM conflict WHERE imageDigest IS NOT NULL")
            let kept = Set((digests + losing).compactMap { SHA256Digest(bytes: Array($0))?.hex })
            let files = (try? FileManager.default.contentsOfDirectory(atPath: trashDirectory.path)) ?? []
            let unnamed = files.filter { !kept.contains($0) }
            // So are the photos tombstones keep for a revival, until the tombstone is collected:
            // read only when some file is left (one pass over the tombstones that keep fields).
            let tombstonePhotos =
                unnamed.isEmpty ? [] : Set(try Self.tombstonePhotoRefs(db).map(\.digest.hex))
            for name in unnamed where !tombstonePhotos.contains(name) {
                _ = FileIO.unlinkIfPresent(trashDirectory.appendingPathComponent(name).path)
            }
            return removed
        }
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
}

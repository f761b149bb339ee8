import Foundation
import GRDB
import HPSyncModel

/// The photos a node keeps without showing them, in `verify` (Protocol.md 5.9): a photo that
/// lost a clash stays in `trash/<hex>` while the clash is open, so that the Conflicts page can
/// show it and "Take this value" can set it; the photo a deleted item keeps stays there until gc
/// collects the tombstone, for a revival. A copy this node holds must be intact; one it never
/// received is no problem.
extension Store {
    /// Checks every kept losing photo, and every photo a deleted item keeps for a revival
    /// (Protocol.md 5.9), into `report`; with `repair`, a damaged one is copied again from a
    /// live photo `intact` (checked by this verify) with the same digest. A kept photo this node
    /// never held is no problem: the page, or the revival, gets it from a peer.
    func verifyKeptPhotos(into report: inout VerifyReport, repair: Bool, intact: [SHA256Digest: String]) throws {
        let trash = trashImages
        var checked = Set(try trashedImages().map(\.ref.digest))
        var copied = false
        let tombstonePhotos = try read { db in try Self.tombstonePhotoRefs(db) }
        let kept: [(ref: ImageRef, what: String, problems: WritableKeyPath<VerifyReport, [String]>)] =
            try conflictPhotoRefs().map { ($0, "a photo that lost a clash", \.mismatchedConflictPhotos) }
            + tombstonePhotos.map { ($0, "the photo of a deleted item", \.mismatchedTombstonePhotos) }
        for (ref, what, problems) in kept where checked.insert(ref.digest).inserted {
            let path = trash.path(ref.digest)
            guard FileIO.exists(path) else { continue }
            report.imagesChecked += 1
            if trash.isIntact(ref) { continue }
            let name = "trash/\(ref.digest.hex)"
            if repair, let source = intact[ref.digest], try trash.keep(copying: source, ref: ref) {
                report.repaired.append("healed \(name), \(what), from \(source)")
                copied = true
                continue
            }
            report[keyPath: problems].append(name)
        }
        if copied { try trash.syncFolder() }
    }

    /// The photo each tombstone keeps as its photo field's value, once per digest.
    static func tombstonePhotoRefs(_ db: Database) throws -> [ImageRef] {
        let rows = try ItemRecord.fetchAll(db, sql: "SELECT \(ItemRecord.selection) FROM item WHERE deleted = 1 AND fields IS NOT NULL")
        var seen = Set<SHA256Digest>()
        return try rows.compactMap { row in
            guard let ref = try mergeState(db, row).photo.winner?.value, seen.insert(ref.digest).inserted else {
                return nil
            }
            return ref
        }
    }

    /// Each photo that lost a clash, once per digest (trash entries checked on their own).
    private func conflictPhotoRefs() throws -> [ImageRef] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT imageDigest, imageSize FROM conflict
                    WHERE imageDigest IS NOT NULL AND imageSize IS NOT NULL ORDER BY imageDigest
                    """
            ).compactMap { row in
                SHA256Digest(bytes: Array(row["imageDigest"] as Data)).map {
                    ImageRef(digest: $0, size: row["imageSize"])
                }
            }
        }
    }
}

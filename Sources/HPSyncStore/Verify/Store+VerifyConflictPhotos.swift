import Foundation
import GRDB
import HPSyncModel

/// The losing photos of clashes in `verify` (Protocol.md 5.9): a node keeps the bytes of a photo
/// that lost in `trash/<hex>` while the clash is open, so that the Conflicts page can show it
/// and "Take this value" can set it. A copy this node holds must be intact; one it never
/// received (the clash was made elsewhere) is no problem: the page says it is not held here.
extension Store {
    /// Checks every kept losing photo into `report`; with `repair`, a damaged one is copied
    /// again from a live photo `intact` (checked by this verify) with the same digest.
    func verifyConflictPhotos(into report: inout VerifyReport, repair: Bool, intact: [SHA256Digest: String]) throws {
        let trash = trashImages
        let trashed = Set(try trashedImages().map(\.ref.digest))
        var copied = false
        for ref in try conflictPhotoRefs() where !trashed.contains(ref.digest) {
            let path = trash.path(ref.digest)
            guard FileIO.exists(path) else { continue }
            report.imagesChecked += 1
            if trash.isIntact(ref) { continue }
            let name = "trash/\(ref.digest.hex)"
            if repair, let source = intact[ref.digest], try trash.keep(copying: source, ref: ref) {
                report.repaired.append("healed \(name), a photo that lost a clash, from \(source)")
                copied = true
                continue
            }
            report.mismatchedConflictPhotos.append(name)
        }
        if copied { try trash.syncFolder() }
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

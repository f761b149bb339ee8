import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// The trash's images in `verify`: every image the store names is checked, the trash's too,
/// and a repair heals one side from the other where the digests agree.
extension Store {
    var trashImages: TrashImages { TrashImages(url: trashDirectory) }

    /// Each image the trash names, once per digest, with the key of one entry naming it.
    func trashedImages() throws -> [ImageToHeal] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT imageDigest, imageSize, min(key) AS key FROM trash
                    WHERE imageDigest IS NOT NULL AND imageSize IS NOT NULL GROUP BY imageDigest, imageSize
                    ORDER BY imageDigest
                    """)
            return rows.compactMap { row in
                guard let digest = SHA256Digest(bytes: Array(row["imageDigest"] as Data)),
                    let key = try? ItemKey(row["key"] as String)
                else { return nil }
                return ImageToHeal(key: key, ref: ImageRef(digest: digest, size: row["imageSize"]))
            }
        }
    }

    /// The trash images that are missing or damaged (each read and hashed), for a repair to
    /// fetch from a peer; each with the key of one entry naming it.
    package func trashImagesToHeal() throws -> [ImageToHeal] {
        try trashedImages().filter { !trashImages.isIntact($0.ref) }
    }

    /// Checks every trash image into `report`; with `repair`, a damaged or missing one is copied
    /// from a live file `intact` (checked by this verify) with the same digest, and one still
    /// hard-linked to a live file (an earlier version's) becomes a copy of its own.
    func verifyTrash(into report: inout VerifyReport, repair: Bool, intact: [SHA256Digest: String]) throws {
        let trash = trashImages
        var copied = false
        for entry in try trashedImages() {
            report.imagesChecked += 1
            let name = "trash/\(entry.ref.digest.hex)"
            let present = FileIO.exists(trash.path(entry.ref.digest))
            if present && trash.isIntact(entry.ref) {
                if repair && trash.needsCopy(entry.ref.digest),
                    try trash.keep(copying: trash.path(entry.ref.digest), ref: entry.ref)
                {
                    report.repaired.append("made \(name) a copy of its own (it was a hard link to a live photo)")
                    copied = true
                }
                continue
            }
            if repair, let source = intact[entry.ref.digest], try trash.keep(copying: source, ref: entry.ref) {
                report.repaired.append("healed \(name) (of \(entry.key)) from \(source)")
                copied = true
                continue
            }
            if present {
                report.mismatchedTrashImages.append(name)
            } else {
                report.missingTrashImages.append(name)
            }
        }
        if copied { try trash.syncFolder() }
    }

    /// With a repair, heals the live images `report` found missing or damaged from an intact
    /// trash copy with the same digest, through the image journal; they leave the report.
    func healLiveImagesFromTrash(_ report: inout VerifyReport, refs: [ItemKey: ImageRef]) throws {
        let trash = trashImages
        var healed = Set<ItemKey>()
        let byRef = Dictionary(grouping: report.missingImages + report.mismatchedImages) { refs[$0] }
        for (ref, keys) in byRef {
            guard let ref, FileIO.exists(trash.path(ref.digest)) else { continue }
            guard let staged = try? stageImage(copying: URL(fileURLWithPath: trash.path(ref.digest)), expected: ref)
            else { continue }
            for key in try heal(staged, for: keys) {
                healed.insert(key)
                report.repaired.append("healed the image of \(key) from trash/\(ref.digest.hex)")
            }
        }
        report.missingImages.removeAll { healed.contains($0) }
        report.mismatchedImages.removeAll { healed.contains($0) }
    }
}

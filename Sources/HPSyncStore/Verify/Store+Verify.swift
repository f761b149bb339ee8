import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// Checking that the database and the image files agree.
extension Store {
    /// Runs SQLite's integrity check and compares every image file the store names with its row
    /// or trash entry; with `repair`, finishes journaled writes, removes orphans and stale
    /// temporaries older than the sweep age, and heals a live or trash image from an intact
    /// copy with the same digest on the other side.
    public func verify(repair: Bool) throws -> VerifyReport {
        var report = VerifyReport()
        if repair {
            for key in try rollForwardPendingImages() { report.repaired.append("finished image write for \(key)") }
            for name in try sweep(olderThan: configuration.sweepAgeSeconds) {
                report.repaired.append("removed orphan images/\(name)")
            }
        }
        let listing = try images.listing()
        let (integrity, itemCount, rows, pending, unaccounted) = try read { db in
            let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            let itemCount = try ItemRecord.fetchCount(db)
            let rows = try Row.fetchAll(
                db, sql: "SELECT key, imageDigest, imageSize FROM item WHERE deleted = 0 AND imageDigest IS NOT NULL")
            let pending = try PendingImageRecord.fetchAll(db)
            let unaccounted = try unaccountedImageFiles(db, listing: listing)
            return (integrity, itemCount, rows, pending, unaccounted)
        }
        report.integrityErrors = integrity.filter { $0 != "ok" }
        report.itemsChecked = itemCount
        let pendingByKey = Dictionary(pending.map { ($0.key, $0.tempName) }, uniquingKeysWith: { a, _ in a })
        report.pending = pending.compactMap { try? ItemKey($0.key) }
        var intact: [SHA256Digest: String] = [:]
        var refs: [ItemKey: ImageRef] = [:]
        for row in rows {
            let keyText: String = row["key"]
            guard let key = try? ItemKey(keyText) else {
                report.integrityErrors.append("row key '\(keyText)' is not canonical")
                continue
            }
            let digest: Data = row["imageDigest"]
            let size: Int64 = row["imageSize"]
            // While a write is journaled the row describes the temporary, not the final file.
            let path =
                pendingByKey[keyText].map { images.tempPath($0) }.flatMap { FileIO.exists($0) ? $0 : nil }
                ?? images.finalPath(key)
            report.imagesChecked += 1
            guard FileIO.exists(path) else {
                report.missingImages.append(key)
                continue
            }
            let actual = try FileIO.measure(path)
            if actual.size != size || Data(actual.digest.bytes) != digest {
                report.mismatchedImages.append(key)
                if let expected = SHA256Digest(bytes: Array(digest)) {
                    refs[key] = ImageRef(digest: expected, size: size)
                }
            } else if path == images.finalPath(key) {
                intact[actual.digest] = path
            }
        }
        for key in report.missingImages {
            if let row = rows.first(where: { ($0["key"] as String) == key.rawValue }),
                let digest = SHA256Digest(bytes: Array(row["imageDigest"] as Data))
            {
                refs[key] = ImageRef(digest: digest, size: row["imageSize"])
            }
        }
        try verifyTrash(into: &report, repair: repair, intact: intact)
        try verifyKeptPhotos(into: &report, repair: repair, intact: intact)
        if repair { try healLiveImagesFromTrash(&report, refs: refs) }
        for entry in unaccounted {
            if entry.age < configuration.sweepAgeSeconds {
                report.inFlight.append(entry.name)
            } else {
                report.orphans.append(entry.name)
            }
        }
        // Remembered, so that the next pull asks its source for them by digest.
        do {
            try rememberImagesToHeal(report.missingImages + report.mismatchedImages)
        } catch {
            logger.warning("could not remember the images to heal", metadata: ["error": "\(error)"])
        }
        report.identityProblems = identityProblems()
        if isBlind { try verifyBlind(into: &report) }
        if repair {
            // Opening walks the store only when its folder is exposed; a stray file copied in
            // later (`cp` keeps the umask) is tightened here, where the whole store is walked anyway.
            let exposed = StorePrivacy.exposed(directory, onlyOwned: true).count
            if exposed > 0 {
                StorePrivacy.tighten(directory, always: true)
                report.repaired.append(
                    "made \(exposed) store path\(exposed == 1 ? "" : "s") private (folders 0700, files 0600)")
            }
        }
        let exposed = StorePrivacy.exposed(directory)
        report.exposedPaths = exposed.map { "\($0.path) (mode \(String($0.mode, radix: 8)))" }
        report.privacyCommands = exposed.map {
            "chmod \($0.isDirectory ? "700" : "600") '\($0.path.replacingOccurrences(of: "'", with: "'\\''"))'"
        }
        logger.info(
            "verified store",
            metadata: [
                "clean": "\(report.isClean)", "items": "\(report.itemsChecked)", "images": "\(report.imagesChecked)",
            ])
        return report
    }
}

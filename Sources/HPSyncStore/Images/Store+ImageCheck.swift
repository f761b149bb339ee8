import Foundation
import GRDB
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cheap half of healing: which image files the store names are missing or of the wrong
/// size, found without reading any image (one listing of `images/` and one `stat` per file).
///
/// A pull runs it before it asks a version-3 server for images by digest, so a file lost since
/// the last `verify` (or never verified) is fetched again by the next pull. Rot that keeps the
/// size is left to `verify`, which hashes.
extension Store {
    /// Adds the live items whose image file is missing or has the wrong size to the images to
    /// heal; returns how many it added. Items with a journal entry in flight are left alone: their
    /// file is on its way (the journal finishes it).
    @discardableResult
    public func rememberMissingImages() throws -> Int {
        let named = try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT key, imageSize FROM item
                    WHERE deleted = 0 AND imageDigest IS NOT NULL
                    AND key NOT IN (SELECT key FROM pendingImage) AND key NOT IN (SELECT key FROM imageToHeal)
                    """)
        }
        guard !named.isEmpty else { return 0 }
        let present: Set<String>
        do {
            present = Set(try FileManager.default.contentsOfDirectory(atPath: images.path))
        } catch {
            throw StoreError.io(path: images.path, reason: "\(error)")
        }
        var lost: [ItemKey] = []
        for row in named {
            let text: String = row["key"]
            guard let key = try? ItemKey(text) else { continue }
            let size: Int64? = row["imageSize"]
            if !present.contains(text) || Self.fileSize(images.finalPath(key)) != size { lost.append(key) }
        }
        if !lost.isEmpty {
            try rememberImagesToHeal(lost)
            logger.notice(
                "image files missing or of the wrong size; asking the peer for them",
                metadata: ["count": "\(lost.count)"])
        }
        return lost.count
    }

    /// The size of the regular file at `path`, nil when there is none.
    private static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & 0o170000) == 0o100000 else { return nil }
        return Int64(info.st_size)
    }
}

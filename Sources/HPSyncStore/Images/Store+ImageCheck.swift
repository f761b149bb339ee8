import Foundation
import GRDB
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cheap half of healing: which image files the store names are missing or of the wrong
/// size, found without reading any image (one `stat` per file).
///
/// A pull runs it before it asks a version-3 server for images by digest, so a file lost since
/// the last `verify` (or never verified) is fetched again by the next pull. Rot that keeps the
/// size is left to `verify`, which hashes.
extension Store {
    /// Adds the live items whose image file is missing or has the wrong size to the images to
    /// heal; returns how many it added. Items with a journal entry in flight are left alone: their
    /// file is on its way (the journal finishes it).
    @discardableResult
    package func rememberMissingImages() throws -> Int {
        try rememberMissingImages(try findMissingImages())
    }

    /// The same in two halves: `findMissingImages` reads and stats (no write: a pull runs it on
    /// a thread of its own while it connects), `rememberMissingImages(_:)` records what it found.
    @discardableResult
    package func rememberMissingImages(_ lost: [ItemKey]) throws -> Int {
        if !lost.isEmpty {
            try rememberImagesToHeal(lost)
            logger.notice(
                "image files missing or of the wrong size; asking the peer for them",
                metadata: ["count": "\(lost.count)"])
        }
        return lost.count
    }

    /// The live items whose image file is missing or has the wrong size, but for those already
    /// remembered or with a journal entry in flight.
    package func findMissingImages() throws -> [ItemKey] {
        // From the live images' own index: every pull runs this, and reading the rows of the
        // items with images meant a page of the table per image. Each name goes from SQLite's
        // text straight to `fstatat`; a key is made only for a file found missing or resized.
        try images.withOpenFolder { folder in
            try read { db in
                let statement = try RawStatement(
                    db,
                    sql: """
                        SELECT key, imageSize FROM item INDEXED BY item_live_image
                        WHERE deleted = 0 AND imageDigest IS NOT NULL
                        AND key NOT IN (SELECT key FROM pendingImage) AND key NOT IN (SELECT key FROM imageToHeal)
                        """)
                var lost: [ItemKey] = []
                while try statement.step() {
                    let found = statement.withCString(0) { ImageDirectory.regularFileSize(in: folder, named: $0) }
                    guard found ?? nil != statement.optionalInt64(1), let key = try? ItemKey(statement.text(0)) else {
                        continue
                    }
                    lost.append(key)
                }
                return lost
            }
        }
    }
}

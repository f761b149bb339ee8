import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// Healing: images the store names but does not hold intact, fetched again by digest.
///
/// A backup that can only detect rot is half a backup. Whoever finds an image missing or
/// damaged (`verify`, an import without its images, a peer asking for it) remembers its key in
/// `imageToHeal`; `imagesToHeal()` turns what is remembered into requests, and `heal` puts the
/// fetched bytes in place through the image journal without changing any item's version.
extension Store {
    /// Remembers that these items' images need fetching again (idempotent).
    package func rememberImagesToHeal(_ keys: [ItemKey]) throws {
        guard !keys.isEmpty else { return }
        let now = clock.nowMilliseconds()
        try write { db in
            let journal = ImageJournal(db)
            for key in keys { try journal.rememberToHeal(key: key, now: now) }
        }
    }

    /// How many images are remembered as missing or damaged (a cheap count; `imagesToHeal`
    /// checks each one).
    package func imagesToHealCount() throws -> Int {
        try read { try Int.fetchOne($0, sql: "SELECT count(*) FROM imageToHeal") ?? 0 }
    }

    /// The remembered images that still need bytes, one request per key: each key's row must
    /// still name an image, and its file must still be missing or wrong (checked here, so an
    /// image replaced or set again meanwhile drops out). Forgets those that need nothing.
    package func imagesToHeal() throws -> [ImageToHeal] {
        let rows = try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT h.key, i.imageDigest, i.imageSize, i.deleted FROM imageToHeal h
                    LEFT JOIN item i ON i.key = h.key ORDER BY h.key
                    """)
        }
        var wanted: [ImageToHeal] = []
        var settled: [String] = []
        for row in rows {
            let keyText: String = row["key"]
            guard let key = try? ItemKey(keyText), let digestBytes = row["imageDigest"] as Data?,
                let digest = SHA256Digest(bytes: Array(digestBytes)), (row["deleted"] as Bool?) == false
            else {
                settled.append(keyText)
                continue
            }
            let expected = ImageRef(digest: digest, size: row["imageSize"])
            if (try? FileIO.measure(images.finalPath(key))) == expected {
                settled.append(keyText)
            } else {
                wanted.append(ImageToHeal(key: key, ref: expected))
            }
        }
        if !settled.isEmpty { try forgetImagesToHeal(settled) }
        return wanted
    }

    /// Puts `staged` (bytes already verified against its digest) in place for every key in
    /// `keys` whose row still names that image, through the journal; returns the keys healed.
    /// No version changes: the item is the same, only its file was lost. A trash image with
    /// that digest that is missing or damaged gets a copy too (and the key named for it, the
    /// one `trashImagesToHeal` gave, counts as healed).
    package func heal(_ staged: StagedImage, for keys: [ItemKey]) throws -> [ItemKey] {
        defer { staged.discard() }
        try staged.durability.wait()
        let trashKey = try healTrash(from: staged)
        var links: [ItemKey: String] = [:]
        defer { for name in links.values { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        for key in keys { links[key] = try images.linkTemp(staged.tempName) }
        try images.syncDirectory()  // the names before the journal rows that point at them
        var journaled: [(key: ItemKey, temp: String)] = []
        var superseded: [String] = []
        try write { db in
            for key in keys {
                guard let row = try ItemRecord.fetch(db, key: key), !row.deleted,
                    row.imageDigest == Data(staged.ref.digest.bytes), row.imageSize == staged.ref.size,
                    let temp = links[key]
                else { continue }
                if let previous = try ImageJournal(db).record(key: key, tempName: temp) { superseded.append(previous) }
                journaled.append((key, temp))
            }
            try db.cachedStatement(sql: "DELETE FROM imageToHeal WHERE key = ?").executeEach(
                journaled.map { [$0.key.rawValue] })
        }
        for name in superseded { FileIO.unlinkIfPresent(images.tempPath(name)) }
        for (key, _) in journaled { links[key] = nil }
        try finalizeImages(journaled)
        if !journaled.isEmpty {
            logger.notice("healed image", metadata: ["keys": "\(journaled.map(\.key.rawValue))"])
        }
        let healed = journaled.map(\.key)
        return healed + (trashKey.map { key in healed.contains(key) || !keys.contains(key) ? [] : [key] } ?? [])
    }

    /// Copies `staged` into the trash when a trash entry names its image and the trash file is
    /// missing or damaged; returns the key of such an entry.
    private func healTrash(from staged: StagedImage) throws -> ItemKey? {
        let digest = Data(staged.ref.digest.bytes)
        let key = try read { db in
            try String.fetchOne(
                db, sql: "SELECT min(key) FROM trash WHERE imageDigest = ? AND imageSize = ?",
                arguments: [digest, staged.ref.size])
        }
        let trash = trashImages
        guard let key, !trash.isIntact(staged.ref) else { return nil }
        guard try trash.keep(copying: images.tempPath(staged.tempName), ref: staged.ref) else { return nil }
        try trash.syncFolder()
        logger.notice("healed trash image", metadata: ["digest": "\(staged.ref.digest.hex)"])
        return try? ItemKey(key)
    }

    func forgetImagesToHeal(_ keys: [String]) throws {
        try write { db in
            try db.cachedStatement(sql: "DELETE FROM imageToHeal WHERE key = ?").executeEach(keys.map { [$0] })
        }
    }
}

extension Statement {
    fileprivate func executeEach(_ arguments: [StatementArguments]) throws {
        for each in arguments { try execute(arguments: each) }
    }
}

/// An item whose image file is missing or damaged: the bytes it needs.
package struct ImageToHeal: Sendable, Hashable {
    package var key: ItemKey
    package var ref: ImageRef

    package init(key: ItemKey, ref: ImageRef) {
        self.key = key
        self.ref = ref
    }
}

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

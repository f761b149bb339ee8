import Foundation
import GRDB
import HPSyncModel

/// The image journal's files: each journaled temporary renamed into place after its commit, a
/// crash's entries rolled forward, unused files unlinked and swept (`ImageJournal` holds the
/// rows).
extension Store {
    /// Renames `tempName` into place for `key` if the journal still names it, else discards it.
    func finalizeImage(key: ItemKey, tempName: String) throws {
        try finalizeImages([(key, tempName)])
    }

    /// Renames each journaled temporary into place, in one write transaction (so writers in
    /// other processes cannot interleave) and with one directory fsync for the whole batch.
    ///
    /// The transaction only deletes journal rows whose renames are durable already, so it
    /// commits without the WAL's fsync (`synchronous = NORMAL`): if a crash loses it, the rows
    /// come back naming temporaries that no longer exist, which `rollForwardPendingImages`
    /// drops. The next durable commit or checkpoint syncs it along.
    func finalizeImages(_ entries: [(key: ItemKey, temp: String)]) throws {
        guard !entries.isEmpty else { return }
        try configuration.testHooks.afterCommitBeforeFinalize?()
        try writeWithoutSync { db in
            let journal = ImageJournal(db)
            for (key, tempName) in entries {
                if try journal.temp(for: key) == tempName {
                    let temp = images.tempPath(tempName)
                    if FileIO.exists(temp) { try FileIO.renameFile(temp, images.finalPath(key)) }
                    try journal.deleteEntry(key: key)
                } else {
                    // A later transaction superseded or already finished this write.
                    FileIO.unlinkIfPresent(images.tempPath(tempName))
                }
            }
            // Before the commit: once the journal rows are gone, nothing would redo a rename
            // that a crash lost.
            try images.syncDirectory()
        }
    }

    /// Finishes every journaled image (after a crash, or another process's interrupted write).
    @discardableResult
    func rollForwardPendingImages() throws -> [ItemKey] {
        // Every open comes here: look before taking the write lock another process may hold.
        guard try read({ try PendingImageRecord.fetchCount($0) }) > 0 else { return [] }
        let finished = try write { db -> [ItemKey] in
            var finished: [ItemKey] = []
            for pending in try PendingImageRecord.fetchAll(db) {
                let temp = images.tempPath(pending.tempName)
                if let key = try? ItemKey(pending.key), FileIO.exists(temp) {
                    try FileIO.renameFile(temp, images.finalPath(key))
                    finished.append(key)
                }
                try pending.delete(db)
            }
            if !finished.isEmpty { try images.syncDirectory() }  // before the rows go, as above
            return finished
        }
        if !finished.isEmpty {
            logger.notice("rolled interrupted image writes forward", metadata: ["count": "\(finished.count)"])
        }
        return finished
    }

    /// Unlinks `images/<KEY>` for keys whose committed row no longer names an image.
    func unlinkImagesIfUnused(_ keys: [ItemKey], temporaries: [String] = []) throws {
        for name in temporaries { FileIO.unlinkIfPresent(images.tempPath(name)) }
        guard !keys.isEmpty else { return }
        try write { db in
            let journal = ImageJournal(db)
            for key in keys {
                let row = try ItemRecord.fetch(db, key: key)
                let hasImage = row.map { !$0.deleted && $0.imageDigest != nil } ?? false
                if !hasImage, try journal.temp(for: key) == nil { FileIO.unlinkIfPresent(images.finalPath(key)) }
            }
        }
        // No directory fsync: an unlink a crash loses leaves an orphan, which the sweep removes.
    }

    /// Files in `images/` that no row or journal entry accounts for.
    func unaccountedImageFiles(_ db: Database, listing: [(name: String, age: Double)]) throws -> [(
        name: String, age: Double
    )] {
        let withImages = try Set(Self.liveImageKeyTexts(db))
        let pendingTemps = try Set(String.fetchAll(db, sql: "SELECT tempName FROM pendingImage"))
        let pendingKeys = try Set(String.fetchAll(db, sql: "SELECT key FROM pendingImage"))
        return listing.filter { entry in
            if entry.name.hasPrefix(ImageDirectory.tempPrefix) { return !pendingTemps.contains(entry.name) }
            return !withImages.contains(entry.name) && !pendingKeys.contains(entry.name)
        }
    }

    /// The sweep every open does: cheap unless there is something to sweep. The full orphan
    /// check reads every item that has an image, so it runs when stale temporaries are present
    /// or at most once a day (marker file `.last-sweep` beside the database); `verify --repair`
    /// always runs it.
    func sweepIfDue(now: Date = Date()) throws {
        let marker = directory.appendingPathComponent(".last-sweep")
        let lastSweep = FileIO.modificationDate(marker.path)
        let due = lastSweep.map { now.timeIntervalSince($0) > 86_400 || $0 > now } ?? true
        if !due {
            // Only temporaries need a stat here; the images themselves are left unread.
            let temps = try images.listing(prefix: ImageDirectory.tempPrefix)
            guard temps.contains(where: { $0.age >= configuration.sweepAgeSeconds }) else { return }
        }
        try sweep(olderThan: configuration.sweepAgeSeconds)
        if due {
            _ = FileManager.default.createFile(
                atPath: marker.path, contents: Data(), attributes: [.posixPermissions: 0o600])
        }
    }

    /// Deletes orphans and stale temporaries older than `age` seconds; younger ones may belong
    /// to another process's write in flight. Returns the names removed.
    @discardableResult
    func sweep(olderThan age: Double) throws -> [String] {
        let listing = try images.listing()
        let removed = try write { db -> [String] in
            let stale = try unaccountedImageFiles(db, listing: listing).filter { $0.age >= age }
            for entry in stale { FileIO.unlinkIfPresent(images.tempPath(entry.name)) }
            return stale.map(\.name)
        }
        if !removed.isEmpty {
            try images.syncDirectory()
            logger.notice("swept orphan image files", metadata: ["count": "\(removed.count)"])
        }
        return removed
    }
}

/// The image journal's rows, inside one transaction: which temporary each key's next file is.
///
/// A new image is written to `images/.tmp-*` and fsynced; the row naming its digest commits
/// together with a `pendingImage(key, tempName)` entry; then, in a short write transaction (so
/// writers in other processes are serialised), the temporary is renamed to `images/<KEY>` and
/// the entry deleted (`Store.finalizeImages`). Whoever finds an entry (this process, the next
/// `open`, `verify --repair`) may finish it: the steps are idempotent.
struct ImageJournal {
    let db: Database

    init(_ db: Database) {
        self.db = db
    }

    /// Journals `tempName` as the next file of `key`; returns a temporary it superseded.
    func record(key: ItemKey, tempName: String) throws -> String? {
        let previous = try temp(for: key)
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO pendingImage (key, tempName) VALUES (?, ?)")
            .execute(arguments: [key.rawValue, tempName])
        return previous == tempName ? nil : previous
    }

    /// Removes `key`'s entry; returns the temporary it named.
    func drop(key: ItemKey) throws -> String? {
        guard let previous = try temp(for: key) else { return nil }
        try deleteEntry(key: key)
        return previous
    }

    func deleteEntry(key: ItemKey) throws {
        try db.cachedStatement(sql: "DELETE FROM pendingImage WHERE key = ?").execute(arguments: [key.rawValue])
    }

    /// Whether any image write is journaled (committed, not yet renamed into place).
    func hasEntries() throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pendingImage)")) ?? false
    }

    /// Remembers that `key`'s row names an image whose bytes did not come (a record applied
    /// without them): the file is out of step with its row until healing fetches it
    /// (`Store.rememberImagesToHeal` does it in a transaction of its own).
    func rememberToHeal(key: ItemKey, now: UInt64) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO imageToHeal (key, foundAt) VALUES (?, ?)")
            .execute(arguments: [key.rawValue, Int64(now)])
    }

    /// The temporary journaled for `key`, if any.
    func temp(for key: ItemKey) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT tempName FROM pendingImage WHERE key = ?"), arguments: [key.rawValue])
    }
}

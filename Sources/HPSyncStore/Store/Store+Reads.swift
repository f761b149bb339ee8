import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// Reading items, the change feed and the counts.
extension Store {
    /// The current row for `key`, tombstones included.
    public func item(_ key: ItemKey) throws -> Item? {
        try read { db in try ItemRecord.fetch(db, key: key)?.item() }
    }

    /// All items ordered by key; tombstones only when asked for.
    public func items(includeDeleted: Bool = false) throws -> [Item] {
        try read { db in
            let sql =
                includeDeleted
                ? "SELECT \(ItemRecord.selection) FROM item ORDER BY key" : "SELECT \(ItemRecord.selection) FROM item WHERE deleted = 0 ORDER BY key"
            var origins = OriginCache()
            var items: [Item] = []
            let cursor = try ItemRecord.fetchCursor(db, sql: sql)
            while let record = try cursor.next() { items.append(try record.item(origins: &origins)) }
            return items
        }
    }

    /// The live item whose key starts with `prefix` (at least 4 characters, any case), or the
    /// item with exactly that key. Ambiguous and unknown prefixes are errors.
    public func resolve(prefix: String) throws -> ItemKey {
        if let key = try? ItemKey(prefix) {
            guard try item(key) != nil else { throw StoreError.unknownKey(key.rawValue) }
            return key
        }
        let upper = prefix.uppercased()
        guard upper.utf8.allSatisfy({ c in (48...57).contains(c) || (65...70).contains(c) || c == 45 }),
            upper.utf8.count <= 36
        else { throw StoreError.invalidKey(prefix) }
        guard upper.utf8.count >= 4 else { throw StoreError.prefixTooShort(prefix) }
        let matches = try read { db in
            try String.fetchAll(
                db, sql: "SELECT key FROM item WHERE key >= ? AND key < ? AND deleted = 0 ORDER BY key LIMIT 11",
                arguments: [upper, upper + "~"])
        }
        switch matches.count {
        case 0: throw StoreError.unknownKey(prefix)
        case 1: return try ItemKey(matches[0])
        default: throw StoreError.ambiguousPrefix(prefix, candidates: matches.compactMap { try? ItemKey($0) })
        }
    }

    /// Counts of items, tombstones, images and the last seq, from the indexes (no table scan).
    public func status() throws -> StoreStatus {
        try read { db in
            let rows = try Self.rowCounts(db)
            let images = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) AS images, COALESCE(SUM(imageSize), 0) AS imageBytes
                    FROM item INDEXED BY item_live_image WHERE deleted = 0 AND imageDigest IS NOT NULL
                    """)!
            let meta = try MetaRecord.load(db)
            return StoreStatus(
                items: rows.all - rows.tombstones, tombstones: rows.tombstones, images: images["images"],
                imageBytes: images["imageBytes"], lastSeq: meta.lastSeq, peers: try PeerRecord.fetchCount(db),
                conflicts: try Self.conflictCount(db))
        }
    }

    /// How many live items this store has: every row less the tombstones, each counted from an
    /// index (a millisecond at 100,000 items, where reading the table took fifty).
    package func liveItemCount() throws -> Int {
        try read { db in try Self.liveItemCount(db) }
    }

    /// `liveItemCount()` inside the caller's transaction.
    static func liveItemCount(_ db: Database) throws -> Int {
        let rows = try rowCounts(db)
        return rows.all - rows.tombstones
    }

    /// The keys (as stored) of the live items that have an image, from their own index.
    static func liveImageKeyTexts(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT key FROM item INDEXED BY item_live_image WHERE deleted = 0 AND imageDigest IS NOT NULL")
    }

    private static func rowCounts(_ db: Database) throws -> (all: Int, tombstones: Int) {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT (SELECT count(*) FROM item) AS allRows,
                  (SELECT count(*) FROM item INDEXED BY item_tombstone WHERE deleted = 1) AS tombstones
                """)!
        return (row["allRows"], row["tombstones"])
    }

    /// How many live items this store has, counting no further than `limit` (so that a caller
    /// who only needs to know "at least this many" does not scan the whole table).
    package func liveItemCount(upTo limit: Int) throws -> Int {
        try read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM (SELECT 1 FROM item WHERE deleted = 0 LIMIT ?)", arguments: [limit]) ?? 0
        }
    }

    /// The seq of this store's latest change.
    package var lastSeq: Int64 {
        get throws { try read { db in try MetaRecord.load(db).lastSeq } }
    }

    /// Up to `limit` feed entries with seq greater than `seq`, in ascending seq.
    package func changes(after seq: Int64, limit: Int) throws -> [ChangeEntry] {
        try feedPage(after: seq, limit: limit).entries
    }

    /// Up to `limit` feed entries after `seq` with the record of each live one, and the feed's
    /// last seq, from one snapshot and one pass over the seq index: what a source sends.
    package func feedPage(after seq: Int64, limit: Int, counting: Bool = false) throws -> FeedPage {
        try read { db in
            var page = FeedPage(entries: [], records: [:], lastSeq: try MetaRecord.load(db).lastSeq)
            let rows = try ItemRecord.fetchFeed(db, after: seq, limit: limit)
            page.entries.reserveCapacity(rows.count)
            page.records.reserveCapacity(rows.count)
            var origins = OriginCache()
            var counts = FeedCounts(entries: Int64(rows.count), tombstones: 0, imageBytes: 0)
            for row in rows {
                let item = try row.itemWithMergeFields(db, origins: &origins)
                page.entries.append(
                    ChangeEntry(
                        key: item.key, version: item.version, deleted: row.deleted, seq: row.seq,
                        mergeDigest: row.mergeDigest))
                if row.deleted {
                    counts.tombstones += 1
                } else {
                    page.records[item.key] = item
                    counts.imageBytes += row.imageSize ?? 0
                }
            }
            // The page's rows are counted as read; only what lies past them is counted by SQL
            // (a first page of an incremental pull holds all or most of it: the rows are not
            // read a second time).
            if counting {
                if rows.count == limit, let last = rows.last {
                    let rest = try Self.feedCounts(db, after: last.seq)
                    counts.entries += rest.entries
                    counts.tombstones += rest.tombstones
                    counts.imageBytes += rest.imageBytes
                }
                page.counts = counts
            }
            return page
        }
    }

    /// How many feed entries (what `changes(after:)` would page through), how many of them
    /// tombstones, and the bytes of the live ones' images come after `seq`: one scan.
    package func feedCounts(after seq: Int64) throws -> FeedCounts {
        try read { db in try Self.feedCounts(db, after: seq) }
    }

    private static func feedCounts(_ db: Database, after seq: Int64) throws -> FeedCounts {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT count(*), COALESCE(SUM(deleted), 0),
                       COALESCE(SUM(CASE WHEN deleted = 0 THEN imageSize ELSE 0 END), 0)
                FROM item WHERE seq > ?
                """, arguments: [seq])
        return FeedCounts(entries: row?[0] ?? 0, tombstones: row?[1] ?? 0, imageBytes: row?[2] ?? 0)
    }

    /// The current version of each of `keys` that this store has.
    package func currentVersions(_ keys: [ItemKey]) throws -> [ItemKey: ChangeEntry] {
        try read { db in
            let rows = try ItemRecord.fetchMany(db, keys: keys)
            var result: [ItemKey: ChangeEntry] = [:]
            result.reserveCapacity(rows.count)
            for key in keys {
                if let row = rows[key.rawValue] { result[key] = try row.changeEntry() }
            }
            return result
        }
    }

    /// The current rows of `keys`, tombstones included, in the same order; unknown keys omitted.
    /// Their merge states are in the compact form, unread, as a source sends them.
    package func records(_ keys: [ItemKey]) throws -> [Item] {
        try read { db in
            let rows = try ItemRecord.fetchMany(db, keys: keys)
            var origins = OriginCache()
            return try keys.compactMap { try rows[$0.rawValue]?.itemWithMergeFields(db, origins: &origins) }
        }
    }

    /// A committed local image file with `digest` (under any key), or nil.
    package func imageFile(withDigest digest: SHA256Digest) throws -> URL? {
        try imageFiles(withDigests: [digest])[digest]
    }

    /// A committed local image file for each of `digests` this store has one with (under any
    /// key), in one read: a sink asks for a page's digests at once.
    package func imageFiles(withDigests digests: [SHA256Digest]) throws -> [SHA256Digest: URL] {
        guard !digests.isEmpty else { return [:] }
        let candidates = try read { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT key FROM item WHERE imageDigest = ? AND deleted = 0
                      AND key NOT IN (SELECT key FROM pendingImage) LIMIT 8
                    """)
            var keys: [SHA256Digest: [String]] = [:]
            for digest in digests where keys[digest] == nil {
                keys[digest] = try String.fetchAll(statement, arguments: [Data(digest.bytes)])
            }
            return keys
        }
        var files: [SHA256Digest: URL] = [:]
        for (digest, keys) in candidates {
            for text in keys {
                guard let key = try? ItemKey(text) else { continue }
                let url = imageFileURL(for: key)
                if FileIO.exists(url.path) {
                    files[digest] = url
                    break
                }
            }
        }
        return files
    }

    /// How far this store has read `peerStore`'s feed in `direction`; 0 if never.
    package func checkpoint(peerStore: StoreID, direction: SyncDirection) throws -> Int64 {
        try read { db in try CheckpointRecord.seq(db, peerStore: peerStore, direction: direction) ?? 0 }
    }
}

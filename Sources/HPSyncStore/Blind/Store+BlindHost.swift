import Foundation
import GRDB
import HPSyncModel

/// A blind store (`init --blind`, Protocol.md 5.8): it keeps sealed records by record ID, sealed
/// photos by photo ID in `sealed/`, and a head, none of which it can read. It orders versions of
/// one record ID by (stamp, origin) as a trusted store orders items, and gives each stored entry
/// the next seq, so trusted nodes list what changed since their last visit.
extension Store {
    /// Makes a new, empty store blind (`init --blind`); a store that holds items stays as it is.
    package func makeBlind() throws {
        try write { db in
            let items = try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0
            guard items == 0 else {
                throw StoreError.database("a store that holds items cannot become blind")
            }
            try db.execute(sql: "UPDATE meta SET blind = 1 WHERE id = 1")
        }
        try StorePrivacy.makeDirectory(sealedPhotoDirectory)
    }

    /// Where sealed photos live, one file per photo ID in hex.
    package var sealedPhotoDirectory: URL { sealedDirectory(.photo) }

    package func sealedPhotoURL(_ id: BlindID) -> URL { sealedURL(id, .photo) }

    /// Where sealed streams of `kind` live, one file per ID in hex: photos in `sealed/`, packs
    /// (version 6) in `packs/`, so that what names a photo never decides a pack's fate.
    package func sealedDirectory(_ kind: SealedStreamKind) -> URL {
        switch kind {
        case .photo: directory.appendingPathComponent("sealed", isDirectory: true)
        case .pack: directory.appendingPathComponent("packs", isDirectory: true)
        }
    }

    package func sealedURL(_ id: BlindID, _ kind: SealedStreamKind) -> URL {
        sealedDirectory(kind).appendingPathComponent(id.hex)
    }

    /// Whether this blind store holds any pack (version 6): then only trusted nodes of version 6
    /// can read it.
    package var holdsSealedPacks: Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: sealedDirectory(.pack).path)) ?? []
        return names.contains { !$0.hasPrefix(".") }
    }

    /// Makes the renames of committed uploads of `kind` durable.
    package func syncSealedDirectory(_ kind: SealedStreamKind) throws {
        try FileIO.syncDirectory(sealedDirectory(kind).path)
    }

    /// The head, or epoch 0 with nothing sealed when none was written yet.
    package func blindHead() throws -> BlindHeadMessage {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT epoch, sealed FROM blindHead WHERE one = 1") else {
                return BlindHeadMessage(epoch: 0, sealed: [])
            }
            return BlindHeadMessage(epoch: row["epoch"], sealed: Array(row["sealed"] as Data))
        }
    }

    /// Replaces the head if its epoch is still `expected`; false (and nothing written) if not.
    /// `droppingEntries`: the head comes from a session that uploaded packs, so it names packs
    /// and the version-4 entries are read no more (Protocol.md 5.8.7): they go with it.
    package func setBlindHead(expected: Int64, _ head: BlindHeadMessage, droppingEntries: Bool = false) throws -> Bool {
        try write { db in
            let current = try Int64.fetchOne(db, sql: "SELECT epoch FROM blindHead WHERE one = 1") ?? 0
            guard current == expected, head.epoch > expected else { return false }
            if droppingEntries { try db.execute(sql: "DELETE FROM blindEntry") }
            try db.execute(
                sql: "INSERT OR REPLACE INTO blindHead (one, epoch, sealed) VALUES (1, ?, ?)",
                arguments: [head.epoch, Data(head.sealed)])
            return true
        }
    }

    /// Up to `limit` entries with seq > `since`, ascending; `isFinal` when none follow. A final
    /// page's through_seq is the store's highest seq, below `since` if the store went back
    /// (restored from an old copy): the reader is the one to judge that.
    package func blindEntries(after since: Int64, limit: Int) throws -> BlindListPage {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, stamp, origin, seq, photoID, photoSize FROM blindEntry
                    WHERE seq > ? ORDER BY seq LIMIT ?
                    """, arguments: [since, limit + 1])
            let entries = try rows.prefix(limit).map(Self.blindEntry)
            let last = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM blindEntry") ?? 0
            let isFinal = rows.count <= limit
            return BlindListPage(
                entries: entries, throughSeq: isFinal ? last : entries.last!.seq, isFinal: isFinal)
        }
    }

    /// The stored entries of `ids` with their sealed records (IDs the store lacks are left out).
    package func blindObjects(_ ids: [BlindID]) throws -> [BlindObject] {
        try read { db in
            let lookup = try db.cachedStatement(
                sql: "SELECT id, stamp, origin, seq, photoID, photoSize, sealed FROM blindEntry WHERE id = ?")
            return try ids.compactMap { id in
                guard let row = try Row.fetchOne(lookup, arguments: [Data(id.bytes)]) else { return nil }
                return BlindObject(entry: try Self.blindEntry(row), sealed: Array(row["sealed"] as Data))
            }
        }
    }

    /// What a BlindPut did.
    package struct BlindPutResult: Equatable, Sendable {
        package var applied: Int64
        package var stale: Int64
        package var throughSeq: Int64
    }

    /// Stores each object whose (stamp, origin) is not below the store's entry of its ID, in one
    /// transaction; each stored entry gets the next seq. A photo an object names must already be
    /// in `sealed/` at its size (uploaded first). Photos no entry names any more are removed
    /// after the commit.
    package func blindPut(_ objects: [BlindObject]) throws -> BlindPutResult {
        for object in objects {
            guard let photo = object.entry.photo else { continue }
            guard hasSealedPhoto(photo.id, size: photo.size) else {
                throw StoreError.invalidBlindEntry(
                    "record \(object.entry.id) names sealed photo \(photo.id) of \(photo.size) bytes, which was not uploaded first"
                )
            }
        }
        var released: Set<BlindID> = []
        let result = try write { db -> BlindPutResult in
            var seq = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM blindEntry") ?? 0
            var result = BlindPutResult(applied: 0, stale: 0, throughSeq: seq)
            let lookup = try db.cachedStatement(
                sql: "SELECT id, stamp, origin, seq, photoID, photoSize FROM blindEntry WHERE id = ?")
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO blindEntry (id, stamp, origin, seq, sealed, photoID, photoSize)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """)
            for object in objects {
                let entry = object.entry
                let idData = Data(entry.id.bytes)
                let current = try Row.fetchOne(lookup, arguments: [idData]).map(Self.blindEntry)
                // An equal version replaces too: a trusted node that found this copy broken
                // stores its own again (a repair); an older one never does.
                if let current, entry.version < current.version {
                    result.stale += 1
                    continue
                }
                if let old = current?.photo, old.id != entry.photo?.id { released.insert(old.id) }
                seq += 1
                try upsert.execute(
                    arguments: [
                        idData, Int64(bitPattern: entry.version.stamp.rawValue), Data(entry.version.origin.bytes), seq,
                        Data(object.sealed), entry.photo.map { Data($0.id.bytes) }, entry.photo?.size ?? 0,
                    ])
                result.applied += 1
            }
            result.throughSeq = seq
            // A photo still named by another entry stays.
            for id in released {
                let users = try Int64.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM blindEntry WHERE photoID = ?", arguments: [Data(id.bytes)])
                if users ?? 0 > 0 { released.remove(id) }
            }
            return result
        }
        for id in released { _ = FileIO.unlinkIfPresent(sealedPhotoURL(id).path) }
        return result
    }

    /// Whether the sealed photo `id` is stored at `size` bytes.
    package func hasSealedPhoto(_ id: BlindID, size: Int64) -> Bool {
        let stored = try? FileManager.default.attributesOfItem(atPath: sealedPhotoURL(id).path)[.size] as? Int64
        return stored == size
    }

    static func blindEntry(_ row: Row) throws -> BlindEntry {
        guard let id = BlindID(bytes: row["id"] as Data), let origin = NodeID(bytes: row["origin"] as Data) else {
            throw StoreError.database("a blind entry is malformed; the blind store is damaged")
        }
        var photo: BlindPhotoRef?
        if let photoData = row["photoID"] as Data? {
            guard let photoID = BlindID(bytes: photoData) else {
                throw StoreError.database("a blind entry's photo ID is malformed; the blind store is damaged")
            }
            photo = BlindPhotoRef(id: photoID, size: row["photoSize"])
        }
        return BlindEntry(
            id: id, version: Version(stamp: VersionStamp(rawValue: UInt64(bitPattern: row["stamp"])), origin: origin),
            seq: row["seq"], photo: photo)
    }
}

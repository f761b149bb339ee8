import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// What a trusted node knows of a blind peer: a mirror of its entries (record ID, version, seq,
/// photo), with the item key and tombstone flag of each version once this node has sealed or
/// opened it, and what it last saw there (the blind store's ID, the seq listed through, the
/// highest head epoch). The mirror is what the head the trusted nodes seal is checked against,
/// and what a push compares local versions with.
extension Store {
    /// The blind peer's store, listing position and highest epoch seen.
    package struct BlindPeerState: Equatable, Sendable {
        package var storeID: StoreID
        package var throughSeq: Int64
        package var epoch: Int64

        package init(storeID: StoreID, throughSeq: Int64, epoch: Int64) {
            self.storeID = storeID
            self.throughSeq = throughSeq
            self.epoch = epoch
        }
    }

    /// One mirrored entry, with what this node knows of the item behind it.
    package struct BlindMirrorRow: Equatable, Sendable {
        package var entry: BlindEntry
        /// Known once this node sealed or opened this version.
        package var key: ItemKey?
        package var deleted: Bool?
        /// The merge digest (Protocol.md 5.9) of the state sealed in this entry, known once this
        /// node sealed or opened it: an entry stored again at the same version may hold another.
        package var mergeDigest: UInt64?
        /// This node found this version's seal broken: a push stores its own copy again.
        package var damaged: Bool
    }

    package func blindPeerState(_ peer: NodeID) throws -> BlindPeerState? {
        try read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT storeID, throughSeq, epoch FROM blindPeerState WHERE peerNode = ?",
                    arguments: [Data(peer.bytes)]), let storeID = StoreID(bytes: row["storeID"] as Data)
            else { return nil }
            return BlindPeerState(storeID: storeID, throughSeq: row["throughSeq"], epoch: row["epoch"])
        }
    }

    /// Records listed entries in one transaction: each replaces the mirror's row of its ID (what
    /// was known of the item is kept only for the same version, its merge digest only for the
    /// same seq). A blind store with another store ID than the one mirrored starts the mirror over.
    /// `known` names the item behind versions this node just sealed (a push's own entries), noted
    /// in the same transaction.
    package func mirrorBlindEntries(
        peer: NodeID, _ entries: [BlindEntry], state: BlindPeerState,
        known: [BlindID: (version: Version, key: ItemKey, deleted: Bool, mergeDigest: UInt64)] = [:]
    ) throws {
        let node = Data(peer.bytes)
        // A cache of what the blind store holds: lost in a crash, it is listed again. Only the
        // highest epoch seen (`setBlindEpoch`) must survive one, and is committed durably.
        try writeWithoutSync { db in
            if let old = try Data.fetchOne(
                db, sql: "SELECT storeID FROM blindPeerState WHERE peerNode = ?", arguments: [node]),
                old != Data(state.storeID.bytes)
            {
                try db.execute(sql: "DELETE FROM blindMirror WHERE peerNode = ?", arguments: [node])
            }
            // An empty mirror (a first listing) has nothing to keep: no lookup per entry.
            let mirrored =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM blindMirror WHERE peerNode = ?)", arguments: [node]) ?? true
            let lookup = try db.cachedStatement(
                sql:
                    "SELECT stamp, origin, seq, itemKey, deleted, mergeDigest FROM blindMirror WHERE peerNode = ? AND id = ?"
            )
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO blindMirror
                      (peerNode, id, stamp, origin, seq, photoID, photoSize, itemKey, deleted, mergeDigest)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for entry in entries {
                let stamp = Int64(bitPattern: entry.version.stamp.rawValue)
                let origin = Data(entry.version.origin.bytes)
                var key: String?
                var deleted: Int64?
                var digest: Int64?
                if let sealed = known[entry.id], sealed.version == entry.version {
                    (key, deleted) = (sealed.key.rawValue, sealed.deleted ? 1 : 0)
                    digest = Int64(bitPattern: sealed.mergeDigest)
                } else if mirrored, let row = try Row.fetchOne(lookup, arguments: [node, Data(entry.id.bytes)]),
                    (row["stamp"] as Int64) == stamp && (row["origin"] as Data) == origin
                {
                    (key, deleted) = (row["itemKey"], row["deleted"])
                    // Stored again (a new seq): the same version, perhaps another state.
                    if (row["seq"] as Int64) == entry.seq { digest = row["mergeDigest"] }
                }
                try upsert.execute(arguments: [
                    node, Data(entry.id.bytes), stamp, origin, entry.seq, entry.photo.map { Data($0.id.bytes) },
                    entry.photo?.size ?? 0, key, deleted, digest,
                ])
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO blindPeerState (peerNode, storeID, throughSeq, epoch) VALUES (?, ?, ?, ?)",
                arguments: [node, Data(state.storeID.bytes), state.throughSeq, state.epoch])
        }
    }

    /// Notes the item behind mirrored versions (sealed or opened here) and the merge digest of
    /// the state each holds; a row whose version or seq has changed since is left alone.
    package func noteBlindItems(
        peer: NodeID, _ items: [(entry: BlindEntry, key: ItemKey, deleted: Bool, mergeDigest: UInt64)]
    ) throws {
        guard !items.isEmpty else { return }
        let node = Data(peer.bytes)
        try writeWithoutSync { db in
            let update = try db.cachedStatement(
                sql: """
                    UPDATE blindMirror SET itemKey = ?, deleted = ?, mergeDigest = ?
                    WHERE peerNode = ? AND id = ? AND stamp = ? AND origin = ? AND seq = ?
                    """)
            for item in items {
                try update.execute(
                    arguments: [
                        item.key.rawValue, item.deleted ? 1 : 0, Int64(bitPattern: item.mergeDigest), node,
                        Data(item.entry.id.bytes), Int64(bitPattern: item.entry.version.stamp.rawValue),
                        Data(item.entry.version.origin.bytes), item.entry.seq,
                    ])
            }
        }
    }

    /// Marks mirrored versions whose seal this node found broken (or which the blind peer did
    /// not serve); a later listing of a new version clears the mark.
    package func markBlindDamaged(peer: NodeID, _ entries: [BlindEntry]) throws {
        guard !entries.isEmpty else { return }
        try writeWithoutSync { db in
            for entry in entries {
                try db.execute(
                    sql:
                        "UPDATE blindMirror SET damaged = 1 WHERE peerNode = ? AND id = ? AND stamp = ? AND origin = ?",
                    arguments: [
                        Data(peer.bytes), Data(entry.id.bytes), Int64(bitPattern: entry.version.stamp.rawValue),
                        Data(entry.version.origin.bytes),
                    ])
            }
        }
    }

    /// The mirrored versions marked damaged.
    package func blindDamagedRows(peer: NodeID) throws -> [BlindMirrorRow] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, stamp, origin, seq, photoID, photoSize, itemKey, deleted, mergeDigest, damaged
                    FROM blindMirror
                    WHERE peerNode = ? AND damaged = 1 ORDER BY seq
                    """, arguments: [Data(peer.bytes)]
            ).map(Self.mirrorRow)
        }
    }

    /// Sets the highest epoch seen at the blind peer.
    package func setBlindEpoch(peer: NodeID, _ epoch: Int64) throws {
        try write { db in
            try db.execute(
                sql: "UPDATE blindPeerState SET epoch = MAX(epoch, ?) WHERE peerNode = ?",
                arguments: [epoch, Data(peer.bytes)])
        }
    }

    /// Up to `limit` mirrored rows with seq > `since`, ascending seq.
    package func blindMirrorRows(peer: NodeID, after since: Int64, limit: Int) throws -> [BlindMirrorRow] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, stamp, origin, seq, photoID, photoSize, itemKey, deleted, mergeDigest, damaged
                    FROM blindMirror
                    WHERE peerNode = ? AND seq > ? ORDER BY seq LIMIT ?
                    """, arguments: [Data(peer.bytes), since, limit]
            ).map(Self.mirrorRow)
        }
    }

    /// The mirrored rows of `ids` (those the mirror has).
    package func blindMirrorRows(peer: NodeID, ids: [BlindID]) throws -> [BlindID: BlindMirrorRow] {
        try read { db in
            var rows: [BlindID: BlindMirrorRow] = [:]
            let statement = try db.cachedStatement(
                sql: """
                    SELECT id, stamp, origin, seq, photoID, photoSize, itemKey, deleted, mergeDigest, damaged
                    FROM blindMirror
                    WHERE peerNode = ? AND id = ?
                    """)
            for id in ids {
                if let row = try Row.fetchOne(statement, arguments: [Data(peer.bytes), Data(id.bytes)]) {
                    rows[id] = try Self.mirrorRow(row)
                }
            }
            return rows
        }
    }

    /// How many mirrored entries have seq > `since`.
    package func blindMirrorCount(peer: NodeID, after since: Int64) throws -> Int {
        try read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM blindMirror WHERE peerNode = ? AND seq > ?",
                arguments: [Data(peer.bytes), since]) ?? 0
        }
    }

    /// Whether some mirrored entry names the sealed photo `id`.
    package func blindMirrorHasPhoto(peer: NodeID, _ id: BlindID) throws -> Bool {
        try read { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM blindMirror WHERE peerNode = ? AND photoID = ?)",
                arguments: [Data(peer.bytes), Data(id.bytes)]) ?? false
        }
    }

    /// The number of mirrored entries and the SHA-256 of all of them in ascending ID order, each
    /// as ID ‖ stamp (8 bytes, big-endian) ‖ origin: what a head seals and is checked against.
    package func blindMirrorDigest(peer: NodeID) throws -> (count: Int64, digest: SHA256Digest) {
        try read { db in
            var hasher = SHA256()
            var count: Int64 = 0
            let rows = try Row.fetchCursor(
                db, sql: "SELECT id, stamp, origin FROM blindMirror WHERE peerNode = ? ORDER BY id",
                arguments: [Data(peer.bytes)])
            while let row = try rows.next() {
                hasher.update(row["id"] as Data)
                let stamp = UInt64(bitPattern: row["stamp"] as Int64)
                hasher.update(withUnsafeBytes(of: stamp.bigEndian) { Array($0) })
                hasher.update(row["origin"] as Data)
                count += 1
            }
            return (count, hasher.finalize())
        }
    }

    private static func mirrorRow(_ row: Row) throws -> BlindMirrorRow {
        let entry = try blindEntry(row)
        let key = (row["itemKey"] as String?).flatMap { try? ItemKey($0) }
        let deleted = (row["deleted"] as Int64?).map { $0 != 0 }
        return BlindMirrorRow(
            entry: entry, key: key, deleted: deleted,
            mergeDigest: (row["mergeDigest"] as Int64?).map { UInt64(bitPattern: $0) },
            damaged: (row["damaged"] as Int64) != 0)
    }
}

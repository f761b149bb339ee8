import Foundation
import GRDB
import HPSyncModel

/// One pack of a blind peer as this trusted node knows it (`Docs/blind-packs-design.md`): its
/// ID and plaintext size (as the head names them), whether its records were applied here, and
/// what it holds (`BlindPackIndex`'s bytes, which the store keeps without reading).
package struct BlindPackRecord: Equatable, Sendable {
    package var id: BlindID
    package var plainSize: Int64
    package var applied: Bool
    package var contents: [UInt8]

    package init(id: BlindID, plainSize: Int64, applied: Bool, contents: [UInt8]) {
        self.id = id
        self.plainSize = plainSize
        self.applied = applied
        self.contents = contents
    }
}

/// The pack index of each blind peer (table `blindPack`): a row per pack, never per item.
extension Store {
    /// Every pack this node knows of the blind peer `peer`, by ID.
    package func blindPacks(peer: NodeID) throws -> [BlindPackRecord] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, plainSize, applied, contents FROM blindPack WHERE peerNode = ? ORDER BY id",
                arguments: [Data(peer.bytes)]
            ).map { row in
                guard let id = BlindID(bytes: row["id"] as Data) else {
                    throw StoreError.database("blindPack holds an ID that is not 32 bytes")
                }
                return BlindPackRecord(
                    id: id, plainSize: row["plainSize"], applied: row["applied"],
                    contents: Array(row["contents"] as Data))
            }
        }
    }

    /// Records `packs` of `peer` (a row for a pack already known is replaced), in one
    /// transaction.
    package func rememberBlindPacks(_ packs: [BlindPackRecord], peer: NodeID) throws {
        try write { db in try Self.rememberBlindPacks(packs, peer: peer, db) }
    }

    /// The same, inside the caller's transaction (a pull marks a pack applied with the page
    /// that applied its records).
    package static func rememberBlindPacks(_ packs: [BlindPackRecord], peer: NodeID, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO blindPack (peerNode, id, plainSize, applied, contents)
                VALUES (?, ?, ?, ?, ?)
                """)
        for pack in packs {
            try statement.execute(arguments: [
                Data(peer.bytes), Data(pack.id.bytes), pack.plainSize, pack.applied, Data(pack.contents),
            ])
        }
    }

    /// Records the head this node read at a blind peer whose inventory is in packs: the blind
    /// store's ID and the highest epoch seen (durably: it is what catches a rollback), and forgets
    /// the packs the head no longer names. A blind store with another ID than the one recorded
    /// (made again) starts over: no pack of the old one is kept. The mirror of version-4 entries
    /// goes (a store converted to packs).
    package func noteBlindPackHead(peer: NodeID, storeID: StoreID, epoch: Int64, naming named: Set<BlindID>) throws {
        let node = Data(peer.bytes)
        try write { db in
            let old = try Data.fetchOne(
                db, sql: "SELECT storeID FROM blindPeerState WHERE peerNode = ?", arguments: [node])
            if let old, old != Data(storeID.bytes) {
                try db.execute(sql: "DELETE FROM blindPack WHERE peerNode = ?", arguments: [node])
            }
            // A store in packs has no entries to mirror (one converted from entries had).
            try db.execute(sql: "DELETE FROM blindMirror WHERE peerNode = ?", arguments: [node])
            try db.execute(
                sql: """
                    INSERT INTO blindPeerState (peerNode, storeID, throughSeq, epoch) VALUES (?, ?, 0, ?)
                    ON CONFLICT (peerNode) DO UPDATE SET storeID = excluded.storeID,
                      epoch = CASE WHEN storeID = excluded.storeID THEN MAX(epoch, excluded.epoch) ELSE excluded.epoch END
                    """, arguments: [node, Data(storeID.bytes), epoch])
            let known = try Data.fetchAll(db, sql: "SELECT id FROM blindPack WHERE peerNode = ?", arguments: [node])
            let statement = try db.cachedStatement(sql: "DELETE FROM blindPack WHERE peerNode = ? AND id = ?")
            for id in known where BlindID(bytes: id).map({ !named.contains($0) }) ?? true {
                try statement.execute(arguments: [node, id])
            }
        }
    }

    /// The sealed photos of `peer` a pull found damaged or missing: a push uploads them again,
    /// though a pack names them.
    package func blindDamagedPhotos(peer: NodeID) throws -> Set<BlindID> {
        try read { db in
            Set(
                try Data.fetchAll(
                    db, sql: "SELECT photoID FROM blindDamagedPhoto WHERE peerNode = ?", arguments: [Data(peer.bytes)]
                ).compactMap { BlindID(bytes: $0) })
        }
    }

    /// Records that the sealed photo `id` of `peer` did not open or was not served.
    package func markBlindPhotoDamaged(peer: NodeID, _ id: BlindID) throws {
        try write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO blindDamagedPhoto (peerNode, photoID) VALUES (?, ?)",
                arguments: [Data(peer.bytes), Data(id.bytes)])
        }
    }

    /// Forgets the damage of photos a push stored again.
    package func clearBlindDamagedPhotos(peer: NodeID, _ ids: some Collection<BlindID>) throws {
        guard !ids.isEmpty else { return }
        try write { db in
            let statement = try db.cachedStatement(
                sql: "DELETE FROM blindDamagedPhoto WHERE peerNode = ? AND photoID = ?")
            for id in ids { try statement.execute(arguments: [Data(peer.bytes), Data(id.bytes)]) }
        }
    }
}

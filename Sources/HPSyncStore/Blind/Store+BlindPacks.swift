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

    /// Forgets the packs of `peer` that `kept` does not name (a head that no longer names them:
    /// compacted away, or a blind store made again); returns how many went.
    @discardableResult
    package func forgetBlindPacks(peer: NodeID, keeping kept: Set<BlindID>) throws -> Int {
        try write { db in
            let known = try Data.fetchAll(
                db, sql: "SELECT id FROM blindPack WHERE peerNode = ?", arguments: [Data(peer.bytes)])
            let statement = try db.cachedStatement(sql: "DELETE FROM blindPack WHERE peerNode = ? AND id = ?")
            var forgotten = 0
            for id in known where BlindID(bytes: id).map({ !kept.contains($0) }) ?? true {
                try statement.execute(arguments: [Data(peer.bytes), id])
                forgotten += 1
            }
            return forgotten
        }
    }
}

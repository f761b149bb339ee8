import Foundation
import GRDB
import HPSyncModel

/// One row of `checkpoint`: how far this store has read a peer store's change feed.
struct CheckpointRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "checkpoint"

    enum Columns {
        static let peerStoreID = Column("peerStoreID")
        static let direction = Column("direction")
        static let seq = Column("seq")
        static let updatedAt = Column("updatedAt")
    }

    var peerStoreID: Data
    var direction: String
    var seq: Int64
    var updatedAt: Int64

    /// The stored seq for `peerStore` and `direction`; nil when there is no row.
    static func seq(_ db: Database, peerStore: StoreID, direction: SyncDirection) throws -> Int64? {
        try Int64.fetchOne(
            db, sql: "SELECT seq FROM checkpoint WHERE peerStoreID = ? AND direction = ?",
            arguments: [Data(peerStore.bytes), direction.rawValue])
    }
}

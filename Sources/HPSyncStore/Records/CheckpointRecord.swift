import Foundation
import GRDB

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
}

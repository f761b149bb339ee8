import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// The single row of `meta`: this store's identity, clock high-water mark and last seq.
struct MetaRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "meta"

    enum Columns {
        static let storeID = Column("storeID")
        static let nodeID = Column("nodeID")
        static let hlcHighWater = Column("hlcHighWater")
        static let lastSeq = Column("lastSeq")
        static let remoteHighWater = Column("remoteHighWater")
    }

    var id: Int64 = 1
    var storeID: Data
    var nodeID: Data
    /// The highest stamp seen (UInt64 as Int64 bit pattern).
    var hlcHighWater: Int64
    var lastSeq: Int64
    var schemaVersion: Int64
    var createdAt: Int64
    /// Unknown keys behave as tombstones at this stamp (0: no tombstone was ever collected).
    var gcHorizonStamp: Int64 = 0
    /// The highest seq of a collected tombstone: a sink whose checkpoint is below it has not seen
    /// every deletion, and needs a full reconciliation.
    var gcHorizonSeq: Int64 = 0
    /// The highest stamp received from another node (UInt64 as Int64 bit pattern): a version
    /// this store saw and may have replaced since, which may still live on its maker. `clock
    /// reset` restamps above it, so a restamped version never loses to what it replaced.
    var remoteHighWater: Int64 = 0

    static func load(_ db: Database) throws -> MetaRecord {
        guard let meta = try MetaRecord.fetchOne(db, key: 1) else {
            throw StoreError.database("the meta row is missing; the store is damaged, restore it from a peer")
        }
        return meta
    }

    var gcHorizon: GCHorizon {
        GCHorizon(stamp: VersionStamp(rawValue: UInt64(bitPattern: gcHorizonStamp)), seq: gcHorizonSeq)
    }

    var highWater: VersionStamp {
        get { VersionStamp(rawValue: UInt64(bitPattern: hlcHighWater)) }
        set { hlcHighWater = Int64(bitPattern: newValue.rawValue) }
    }

    var remoteMark: VersionStamp {
        get { VersionStamp(rawValue: UInt64(bitPattern: remoteHighWater)) }
        set { remoteHighWater = Int64(bitPattern: newValue.rawValue) }
    }
}

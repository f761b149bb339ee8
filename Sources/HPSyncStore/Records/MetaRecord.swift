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

    /// The row, read through a cached statement: every command and every sync session reads
    /// it several times, and GRDB's `fetchOne(db, key:)` built and prepared its query and decoded
    /// the row through `Decodable` each time (1.8 M instructions in a session that `serve` ran
    /// for a pull that found no change; about a fifth of all it did outside the handshake).
    static func load(_ db: Database) throws -> MetaRecord {
        let statement = try RawStatement(db, sql: selection)
        guard try statement.step() else {
            throw StoreError.database("the meta row is missing; the store is damaged, restore it from a peer")
        }
        return MetaRecord(
            storeID: statement.optionalBlob(0) ?? Data(), nodeID: statement.optionalBlob(1) ?? Data(),
            hlcHighWater: statement.int64(2), lastSeq: statement.int64(3), schemaVersion: statement.int64(4),
            createdAt: statement.int64(5), gcHorizonStamp: statement.int64(6), gcHorizonSeq: statement.int64(7),
            remoteHighWater: statement.int64(8))
    }

    /// The query `load` runs, its columns in the order it reads them.
    private static let selection = """
        SELECT storeID, nodeID, hlcHighWater, lastSeq, schemaVersion, createdAt, gcHorizonStamp, gcHorizonSeq,
          remoteHighWater FROM meta WHERE id = 1
        """

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

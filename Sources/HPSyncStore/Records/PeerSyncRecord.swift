import GRDB

/// One row of `peerSync`: the outcome of the latest pull or push runs with one peer.
struct PeerSyncRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "peerSync"

    enum Columns {
        static let peerName = Column("peerName")
        static let direction = Column("direction")
        static let lastSuccessAt = Column("lastSuccessAt")
        static let lastFailureAt = Column("lastFailureAt")
        static let lastError = Column("lastError")
        static let lastServedAt = Column("lastServedAt")
    }

    var peerName: String
    var direction: String
    var lastSuccessAt: Int64?
    var lastFailureAt: Int64?
    var lastError: String?
    /// When this store, serving, last completed a session of this intent with the peer.
    var lastServedAt: Int64?
}

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

    /// Forgets what was recorded under the peer name `name`. The history belongs to the peer
    /// entry (its node ID), not to the name: a peer removed and added again, perhaps as another
    /// machine, starts with none, so `status` shows no old machine's error and gc's peer rule
    /// counts no sync the new one never made. Adding clears too, for rows an older release
    /// left behind when it removed a peer.
    static func forget(peer name: String, _ db: Database) throws {
        _ = try filter(Columns.peerName == name).deleteAll(db)
    }
}

import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// One row of `peer`: a trusted node.
struct PeerRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "peer"

    enum Columns {
        static let name = Column("name")
        static let nodeID = Column("nodeID")
        static let address = Column("address")
        static let permission = Column("permission")
        static let addedAt = Column("addedAt")
        static let blind = Column("blind")
    }

    var name: String
    var nodeID: Data
    var address: String?
    var permission: String
    var addedAt: Int64
    var blind: Bool

    init(_ peer: Peer, addedAt: Int64) {
        blind = peer.blind
        name = peer.name
        nodeID = Data(peer.nodeID.bytes)
        address = peer.address
        permission = peer.permission.rawValue
        self.addedAt = addedAt
    }

    /// The row named `name`, through a cached statement (a sync session looks its peer up by
    /// name or by node ID; GRDB's query interface built and prepared that query every time).
    static func fetch(_ db: Database, name: String) throws -> PeerRecord? {
        let statement = try RawStatement(db, sql: "SELECT \(selection) FROM peer WHERE name = ?1")
        statement.bind(name, at: 1)
        return try statement.step() ? PeerRecord(statement) : nil
    }

    /// The row whose node ID is `nodeID`, as `fetch(_:name:)` reads it.
    static func fetch(_ db: Database, nodeID: Data) throws -> PeerRecord? {
        let statement = try RawStatement(db, sql: "SELECT \(selection) FROM peer WHERE nodeID = ?1")
        statement.bind(nodeID, at: 1)
        return try statement.step() ? PeerRecord(statement) : nil
    }

    /// The columns the lookups read, in the order `init(_:)` takes them.
    private static let selection = "name, nodeID, address, permission, addedAt, blind"

    private init(_ row: borrowing RawStatement) {
        name = row.text(0)
        nodeID = row.optionalBlob(1) ?? Data()
        address = row.optionalText(2)
        permission = row.text(3)
        addedAt = row.int64(4)
        blind = row.int64(5) != 0
    }

    func peer() throws -> Peer {
        guard let node = NodeID(bytes: nodeID), let permission = PeerPermission(rawValue: permission) else {
            throw StoreError.database(
                "peer \(name) is malformed; remove it with `hp-sync peer rm \(name)` and add it again")
        }
        return Peer(name: name, nodeID: node, address: address, permission: permission, blind: blind)
    }
}

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

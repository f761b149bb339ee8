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
    }

    var name: String
    var nodeID: Data
    var address: String?
    var permission: String
    var addedAt: Int64

    init(_ peer: Peer, addedAt: Int64) {
        name = peer.name
        nodeID = Data(peer.nodeID.bytes)
        address = peer.address
        permission = peer.permission.rawValue
        self.addedAt = addedAt
    }

    func peer() throws -> Peer {
        guard let node = NodeID(bytes: nodeID), let permission = PeerPermission(rawValue: permission) else {
            throw StoreError.database(
                "peer \(name) is malformed; remove it with `hp-sync peer rm \(name)` and add it again")
        }
        return Peer(name: name, nodeID: node, address: address, permission: permission)
    }
}

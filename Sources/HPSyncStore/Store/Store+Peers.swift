import Foundation
import GRDB
import HPSyncCrypto

/// The peers this node trusts, pinned by node ID.
extension Store {
    /// Adds a peer; its name and node ID must both be new.
    public func addPeer(_ peer: Peer) throws {
        guard Peer.isValidName(peer.name) else { throw StoreError.invalidPeerName(peer.name) }
        try write { db in
            let clash = try PeerRecord.filter(
                PeerRecord.Columns.name == peer.name || PeerRecord.Columns.nodeID == Data(peer.nodeID.bytes)
            ).fetchCount(db)
            guard clash == 0 else { throw StoreError.peerExists(peer.name) }
            try PeerRecord(peer, addedAt: Int64(clock.nowMilliseconds())).insert(db)
        }
    }

    /// Removes the peer called `name`; an unknown name is an error.
    public func removePeer(named name: String) throws {
        let removed = try write { db in try PeerRecord.deleteOne(db, key: name) }
        guard removed else { throw StoreError.unknownPeer(name) }
    }

    /// All peers, by name.
    public func peers() throws -> [Peer] {
        try read { db in try PeerRecord.order(PeerRecord.Columns.name).fetchAll(db).map { try $0.peer() } }
    }

    public func peer(named name: String) throws -> Peer? {
        try read { db in try PeerRecord.fetchOne(db, key: name)?.peer() }
    }

    public func peer(nodeID: NodeID) throws -> Peer? {
        try read { db in
            try PeerRecord.filter(PeerRecord.Columns.nodeID == Data(nodeID.bytes)).fetchOne(db)?.peer()
        }
    }
}

import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

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
            try PeerSyncRecord.forget(peer: peer.name, db)
        }
    }

    /// Removes the peer called `name` and its sync history; an unknown name is an error.
    public func removePeer(named name: String) throws {
        let removed = try write { db in
            try PeerSyncRecord.forget(peer: name, db)
            // What this node kept of a blind peer goes with it: added again, it starts over.
            if let record = try PeerRecord.fetchOne(db, key: name) {
                try db.execute(sql: "DELETE FROM blindMirror WHERE peerNode = ?", arguments: [record.nodeID])
                try db.execute(sql: "DELETE FROM blindPeerState WHERE peerNode = ?", arguments: [record.nodeID])
            }
            return try PeerRecord.deleteOne(db, key: name)
        }
        guard removed else { throw StoreError.unknownPeer(name) }
    }

    /// Changes a peer's address (`.some(nil)` clears it) and/or permission in place, keeping its
    /// node ID, checkpoints and sync history; returns the peer as it now is.
    public func updatePeer(
        named name: String, address: String?? = nil, permission: PeerPermission? = nil, blind: Bool? = nil
    ) throws -> Peer {
        try write { db in
            guard var record = try PeerRecord.fetchOne(db, key: name) else { throw StoreError.unknownPeer(name) }
            if let address { record.address = address }
            if let permission { record.permission = permission.rawValue }
            if let blind { record.blind = blind }
            try record.update(db)
            return try record.peer()
        }
    }

    /// All peers, by name.
    public func peers() throws -> [Peer] {
        try read { db in try PeerRecord.order(PeerRecord.Columns.name).fetchAll(db).map { try $0.peer() } }
    }

    public func peer(named name: String) throws -> Peer? {
        try read { db in try PeerRecord.fetch(db, name: name)?.peer() }
    }

    public func peer(nodeID: NodeID) throws -> Peer? {
        try read { db in try PeerRecord.fetch(db, nodeID: Data(nodeID.bytes))?.peer() }
    }
}

import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// Invitations: one-time secrets that let a node add itself to this store's peers.
extension Store {
    /// Records a new invitation valid for `lifetimeMilliseconds` and returns its secret, which
    /// is kept nowhere: only its SHA-256 is stored.
    package func createInvitation(permission: PeerPermission, name: String?, lifetimeMilliseconds: Int64) throws
        -> (secret: InvitationSecret, invitation: Invitation)
    {
        if let name, !Peer.isValidName(name) { throw StoreError.invalidPeerName(name) }
        let secret = InvitationSecret.random()
        let now = Int64(clock.nowMilliseconds())
        let invitation = Invitation(
            digest: secret.digest, permission: permission, name: name, createdAtMilliseconds: now,
            expiresAtMilliseconds: now + max(lifetimeMilliseconds, 0))
        try write { db in try InvitationRecord(invitation).insert(db) }
        return (secret, invitation)
    }

    /// Every invitation, newest first.
    package func invitations() throws -> [Invitation] {
        try read { db in
            try InvitationRecord.order(InvitationRecord.Columns.createdAt.desc).fetchAll(db).map {
                try $0.invitation()
            }
        }
    }

    /// Deletes the invitation whose digest starts with `prefix` (hex, at least 4 digits), used or
    /// not, and returns it. Revoking a used invitation does not remove the peer it added.
    package func revokeInvitation(prefix: String) throws -> Invitation {
        let hex = prefix.lowercased()
        guard hex.count >= 4, hex.allSatisfy(\.isHexDigit) else { throw StoreError.unknownInvitation(prefix) }
        return try write { db in
            let matches = try InvitationRecord.fetchAll(db).filter {
                SHA256Digest(bytes: $0.secretHash)?.hex.hasPrefix(hex) ?? false
            }
            guard let match = matches.first else { throw StoreError.unknownInvitation(prefix) }
            guard matches.count == 1 else { throw StoreError.ambiguousInvitation(prefix) }
            try match.delete(db)
            return try match.invitation()
        }
    }

    /// Redeems the invitation holding `secret` for `joiner`, in one transaction: checks it is
    /// unused and unexpired, adds the joiner as a peer with the invited permission, and marks
    /// the invitation used. Returns the new peer entry.
    ///
    /// The peer's name is the invitation's, else `suggestedName` sanitized, made unique among
    /// this store's peers. A joiner that already redeemed this invitation and is still a peer
    /// gets its entry back (so a join whose answer was lost can be retried); any other joiner
    /// that is a peer already is refused and the invitation stays unused.
    ///
    /// - Throws: `InvitationRefusal` when the invitation cannot be redeemed.
    package func redeemInvitation(_ secret: InvitationSecret, joiner: NodeID, suggestedName: String) throws -> Peer {
        let hash = Data(secret.digest.bytes)
        let joinerBytes = Data(joiner.bytes)
        let now = Int64(clock.nowMilliseconds())
        return try write { db in
            guard var record = try InvitationRecord.fetchOne(db, key: hash) else { throw InvitationRefusal.unknown }
            let existing = try PeerRecord.filter(PeerRecord.Columns.nodeID == joinerBytes).fetchOne(db)?.peer()
            if record.usedAt != nil {
                if record.usedBy == joinerBytes, let existing { return existing }
                throw InvitationRefusal.alreadyUsed
            }
            guard now < record.expiresAt else { throw InvitationRefusal.expired(atMilliseconds: record.expiresAt) }
            if let existing {
                throw InvitationRefusal.alreadyPeer(name: existing.name, permission: existing.permission)
            }
            let invitation = try record.invitation()
            let base = invitation.name ?? Peer.sanitizedName(suggestedName)
            let name = try Peer.uniqueName(base) { try PeerRecord.fetchOne(db, key: $0) != nil }
            let peer = Peer(name: name, nodeID: joiner, permission: invitation.permission)
            try PeerRecord(peer, addedAt: now).insert(db)
            try PeerSyncRecord.forget(peer: peer.name, db)
            record.usedAt = now
            record.usedBy = joinerBytes
            try record.update(db)
            return peer
        }
    }
}

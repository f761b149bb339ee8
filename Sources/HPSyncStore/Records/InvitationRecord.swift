import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// One row of `invitation`: a one-time secret's hash and what redeeming it grants.
struct InvitationRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "invitation"

    enum Columns {
        static let secretHash = Column("secretHash")
        static let createdAt = Column("createdAt")
        static let expiresAt = Column("expiresAt")
        static let usedAt = Column("usedAt")
    }

    var secretHash: Data
    var permission: String
    var name: String?
    var createdAt: Int64
    var expiresAt: Int64
    var usedAt: Int64?
    var usedBy: Data?

    init(_ invitation: Invitation) {
        secretHash = Data(invitation.digest.bytes)
        permission = invitation.permission.rawValue
        name = invitation.name
        createdAt = invitation.createdAtMilliseconds
        expiresAt = invitation.expiresAtMilliseconds
        usedAt = invitation.usedAtMilliseconds
        usedBy = invitation.usedBy.map { Data($0.bytes) }
    }

    func invitation() throws -> Invitation {
        guard let digest = SHA256Digest(bytes: secretHash), let permission = PeerPermission(rawValue: permission),
            usedBy == nil || NodeID(bytes: usedBy!) != nil
        else {
            throw StoreError.database("an invitation row is malformed; revoke it with `hp-sync invite revoke`")
        }
        return Invitation(
            digest: digest, permission: permission, name: name, createdAtMilliseconds: createdAt,
            expiresAtMilliseconds: expiresAt, usedAtMilliseconds: usedAt, usedBy: usedBy.flatMap { NodeID(bytes: $0) })
    }
}

/// The one-time secret of an invitation: 32 random bytes, shown once to the person who invites
/// and proved by the joiner inside TLS. The store keeps only its SHA-256.
public struct InvitationSecret: Sendable, Hashable {
    public static let byteCount = 32

    public let bytes: [UInt8]

    /// Wraps 32 raw bytes; nil for any other length.
    public init?(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        guard array.count == Self.byteCount else { return nil }
        self.bytes = array
    }

    /// A fresh secret. `SystemRandomNumberGenerator` is a cryptographically secure source on every
    /// platform Swift runs on (getrandom on Linux, arc4random on Apple systems).
    public static func random() -> InvitationSecret {
        var generator = SystemRandomNumberGenerator()
        return InvitationSecret(validated: (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    private init(validated: [UInt8]) { bytes = validated }
}

/// An invitation as the store lists it: never the secret, only its digest.
public struct Invitation: Sendable, Hashable {
    public var digest: SHA256Digest
    public var permission: PeerPermission
    /// The name the joiner will be listed under; nil lets the joiner suggest one.
    public var name: String?
    public var createdAtMilliseconds: Int64
    public var expiresAtMilliseconds: Int64
    public var usedAtMilliseconds: Int64?
    public var usedBy: NodeID?

    /// An invitation as the store's row describes it.
    package init(
        digest: SHA256Digest, permission: PeerPermission, name: String?, createdAtMilliseconds: Int64,
        expiresAtMilliseconds: Int64, usedAtMilliseconds: Int64? = nil, usedBy: NodeID? = nil
    ) {
        self.digest = digest
        self.permission = permission
        self.name = name
        self.createdAtMilliseconds = createdAtMilliseconds
        self.expiresAtMilliseconds = expiresAtMilliseconds
        self.usedAtMilliseconds = usedAtMilliseconds
        self.usedBy = usedBy
    }

    /// The first 12 hex digits of the digest: enough to name it in `invite list` and `revoke`.
    public var shortID: String { String(digest.hex.prefix(12)) }
}

/// Why the store refused to redeem an invitation. The messages go to the joiner, so they say
/// nothing about who used an invitation.
public enum InvitationRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// No invitation has this secret: mistyped, revoked, or made by another server.
    case unknown
    /// The invitation was redeemed already (by another node, or by this one after it left).
    case alreadyUsed
    case expired(atMilliseconds: Int64)
    /// The joiner is a peer already; the invitation was left unused.
    case alreadyPeer(name: String, permission: PeerPermission)

    public var description: String {
        switch self {
        case .unknown:
            return "the server has no such invitation (mistyped, revoked, or made on another server); "
                + "ask for a new one (`hp-sync invite` on the server)"
        case .alreadyUsed:
            return "this invitation has been used already; each invitation works once, ask for a new one"
        case .expired(let at):
            return "this invitation expired at \(DateText.iso8601(milliseconds: at)); ask for a new one"
        case .alreadyPeer(let name, let permission):
            return "this node is already a peer of the server, as '\(name)' (\(permission.rawValue)); "
                + "the invitation was not used. To trust the server here, use `hp-sync peer add`"
        }
    }

}

import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// Why a sync session failed; each message says what happened and what to do.
public enum SyncError: Error, CustomStringConvertible {
    /// The peer ended the session with an Error message.
    case refusedByPeer(PeerErrorMessage)
    /// The peer broke the protocol.
    case protocolViolation(ProtocolError)
    /// The peer's Hello names another node than its certificate, or another than expected.
    case nodeIDMismatch(expected: NodeID, actual: NodeID)
    /// An image's bytes do not hash to the digest its record names.
    case imageDigestMismatch(key: String, detail: String)
    /// An image is larger than this store accepts.
    case imageTooLarge(key: String, size: Int64, limit: Int64)
    /// The peer speaks only version 1 but would need a full reconciliation (this store
    /// garbage-collected deletions it has not received).
    case needsReconciliation(peer: String, detail: String)

    public var description: String {
        switch self {
        case .refusedByPeer(let error):
            return "the peer refused: \(error.message) (\(error.code.name))"
        case .protocolViolation(let error):
            return "\(error); nothing from the unfinished batch was applied, run the command again"
        case .nodeIDMismatch(let expected, let actual):
            return "node ID mismatch: expected \(expected) but the peer is \(actual)"
        case .imageDigestMismatch(let key, let detail):
            return "image for \(key) does not match its digest (\(detail)); nothing from the batch was applied"
        case .imageTooLarge(let key, let size, let limit):
            return "image for \(key) is \(size) bytes, above this store's limit of \(limit) bytes"
        case .needsReconciliation(let peer, let detail):
            return "cannot push to \(peer): \(detail); upgrade hp-sync on \(peer)"
        }
    }

    /// The code to report this to the peer with, when we are the ones ending the session.
    public var wireCode: WireErrorCode {
        switch self {
        case .refusedByPeer(let error): return error.code
        case .protocolViolation(let error): return error.code
        case .nodeIDMismatch: return .nodeIDMismatch
        case .imageDigestMismatch: return .badData
        case .imageTooLarge: return .limit
        case .needsReconciliation: return .incompatibleVersion
        }
    }
}

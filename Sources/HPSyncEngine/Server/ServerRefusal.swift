import HPSyncCrypto
import HPSyncProtocol

/// The server ended the session (refused the Hello, or stopped for shutdown); the client was
/// already told.
struct ServerRefusal: Error {
    let error: PeerErrorMessage

    /// What a client refused a session slot is told (Protocol.md §2, budgets): busy either way,
    /// and when its own node holds its share, so that it knows the wait is on itself.
    static func busy(_ refusal: Admission.Refusal) -> PeerErrorMessage {
        switch refusal {
        case .serverFull:
            return PeerErrorMessage(
                code: .busy, message: "the server is serving its maximum number of sessions; try again in a minute")
        case .peerFull(let held):
            return PeerErrorMessage(
                code: .busy,
                message: "this node already holds \(held) sessions on the server, the most one peer may hold at once "
                    + "(serve --max-sessions-per-peer); try again when they have finished or timed out")
        }
    }
}

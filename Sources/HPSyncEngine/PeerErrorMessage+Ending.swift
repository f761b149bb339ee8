import HPSyncProtocol
import HPSyncStore

extension PeerErrorMessage {
    /// The Error to send the peer when a session ends on this side because of `error`, with
    /// the code Protocol.md names for it (§4.3, §6, §8); nil when the peer need not be told: it
    /// ended the session itself, hung up, or was told already.
    init?(endingSessionFor error: any Error) {
        switch error {
        case SyncError.refusedByPeer, ProtocolError.prematureEOF, SyncError.needsReconciliation, is ServerRefusal:
            return nil
        case let refused as MassDeleteRefused:
            self.init(
                code: .unspecified, message: "the receiving side's mass-deletion guard stopped the session: \(refused)")
        case let syncError as SyncError:
            self.init(code: syncError.wireCode, message: "\(syncError)")
        case let protocolError as ProtocolError:
            self.init(code: protocolError.code, message: "\(protocolError)")
        case let storeError as StoreError:
            self.init(code: storeError.wireCode, message: "\(storeError)")
        default:
            self.init(code: .internalError, message: "error: \(error)")
        }
    }
}

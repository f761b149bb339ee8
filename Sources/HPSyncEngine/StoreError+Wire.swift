import HPSyncProtocol
import HPSyncStore

extension StoreError {
    /// The wire code a server reports a store failure with.
    var wireCode: WireErrorCode {
        switch self {
        case .digestMismatch, .stagingOverflow, .invalidRecord, .invalidKey, .invalidName, .invalidSerial,
            .invalidValue, .invalidBlindEntry:
            return .badData
        case .imageTooLarge: return .limit
        default: return .internalError
        }
    }
}

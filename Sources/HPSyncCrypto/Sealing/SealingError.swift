/// Why a recovery key, an inventory key file or sealed data was refused.
///
/// Every case says what a user can check; none carries key material or plaintext, so a message can
/// be logged or printed as it is.
public enum SealingError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The recovery text is not a recovery key: the reason names the length, the character or the
    /// checksum at fault.
    case badRecoveryKey(String)
    /// Sealed data did not verify under this inventory's key: altered, truncated, swapped with
    /// other sealed data, or sealed under another inventory's key. `what` names the data.
    case authenticationFailed(what: String)
    /// Sealed data or its use has the wrong shape (a length, a format version, a byte count).
    case malformed(String)
    /// The system's random generator failed; nothing can be sealed safely without it.
    case randomFailed
    /// An inventory key file is already there; it is never replaced (data sealed under it would
    /// become unreadable).
    case keyFileExists(path: String)
    /// An inventory key file exists but does not hold a recovery key.
    case invalidKeyFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .badRecoveryKey(let reason):
            return "not a valid recovery key: \(reason); check for a typo"
        case .authenticationFailed(let what):
            return
                "\(what) failed authentication: it was altered, truncated, swapped with other data or sealed "
                + "under another inventory key; nothing of it was used"
        case .malformed(let reason):
            return "malformed sealed data: \(reason)"
        case .randomFailed:
            return "the system's random generator failed; refusing to seal anything without it"
        case .keyFileExists(let path):
            return
                "an inventory key already exists at \(path); refusing to replace it (what was sealed under it "
                + "could no longer be opened). Remove it by hand only if you hold its recovery key elsewhere"
        case .invalidKeyFile(let path, let reason):
            return "inventory key file \(path) is unusable: \(reason); restore it from its recovery key"
        }
    }
}

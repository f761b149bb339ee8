import HPSyncModel

/// Why a session with a blind peer stopped or refused something: what a trusted node detected
/// (Protocol.md 5.8, "What trusted nodes check"), or what it lacks to talk to one.
public enum BlindError: Error, CustomStringConvertible, Equatable {
    /// Sealed data failed authentication: altered, truncated, swapped with another entry's,
    /// replayed under another ID, or sealed under another inventory key.
    case tampered(peer: String, details: [String])
    /// The blind peer serves an older state than this node saw there.
    case rolledBack(peer: String, detail: String)
    /// The entries listed are not the ones the head sealed by the last complete push names.
    case headMismatch(peer: String, detail: String)
    /// Another node wrote to the blind peer during this session.
    case concurrentWrite(peer: String)
    /// The blind store's head would name more packs than it can hold (`BlindPackHead.maxPacks`).
    case tooManyPacks(peer: String, count: Int)
    /// This node has no inventory key (a new node that has not synced with a trusted one).
    case noInventoryKey

    public var description: String {
        switch self {
        case .tampered(let peer, let details):
            let shown = details.prefix(5).joined(separator: "; ")
            let more = details.count > 5 ? " (and \(details.count - 5) more)" : ""
            return
                "blind peer \(peer) served sealed data that failed authentication: \(shown)\(more). Nothing it altered was applied; the rest was. A push from a trusted node that holds these items stores good copies again (for a store in packs, after this node's next push, which leaves what it could not read out); if this persists, the host's copy is damaged or tampered with"
        case .rolledBack(let peer, let detail):
            return
                "blind peer \(peer) serves an older copy than this node saw there (\(detail)); nothing was applied or sent. The host restored an old backup, lost data, or is withholding changes: check it before trusting it again"
        case .headMismatch(let peer, let detail):
            return
                "blind peer \(peer) lists entries that do not match what the trusted nodes last sealed there (\(detail)); nothing was applied or sent. The host is withholding or altering entries: check it"
        case .concurrentWrite(let peer):
            return "another node wrote to blind peer \(peer) during this session; run it again"
        case .tooManyPacks(let peer, let count):
            return
                "blind peer \(peer) would hold \(count) packs, more than its head can name (\(BlindPackHead.maxPacks)); nothing was named. This hp-sync cannot compact a blind store yet: make a new one (`hp-sync init --blind` on the host) and push to it"
        case .noInventoryKey:
            return
                "this node has no inventory key: sync once with a trusted node of this inventory (it hands the key over), or give the recovery key with `hp-sync init --recovery-key`"
        }
    }
}

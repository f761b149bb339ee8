/// Which tombstones `hp-sync gc` may drop: those older than the requested age, but never newer
/// than the oldest last successful sync of any listed peer (so a peer that syncs regularly never
/// needs a full reconciliation), unless forced.
public struct GCCutoff: Sendable, Equatable {
    /// Tombstones stamped before this (milliseconds since 1970) may go; nil: none may.
    public var cutoffMilliseconds: Int64?
    /// The peer whose last sync moved the cutoff earlier than asked, and when it synced.
    public var heldBackBy: (peer: String, lastSyncedAt: Int64)?
    /// Listed peers that never synced with this store: they block gc unless forced.
    public var neverSynced: [String]

    public static func == (lhs: GCCutoff, rhs: GCCutoff) -> Bool {
        lhs.cutoffMilliseconds == rhs.cutoffMilliseconds && lhs.neverSynced == rhs.neverSynced
            && lhs.heldBackBy?.peer == rhs.heldBackBy?.peer
            && lhs.heldBackBy?.lastSyncedAt == rhs.heldBackBy?.lastSyncedAt
    }

    /// - Parameters:
    ///   - requested: now minus the age asked for.
    ///   - peers: every listed peer's name.
    ///   - states: the recorded sync outcomes (ours with each peer and the peer's with us).
    public static func decide(requested: Int64, peers: [String], states: [PeerSyncState], force: Bool) -> GCCutoff {
        var lastSync: [(peer: String, at: Int64?)] = []
        for peer in peers.sorted() {
            lastSync.append((peer, states.filter { $0.peer == peer }.compactMap(\.lastSyncedAt).max()))
        }
        let never = lastSync.filter { $0.at == nil }.map(\.peer)
        if force { return GCCutoff(cutoffMilliseconds: requested, heldBackBy: nil, neverSynced: never) }
        guard never.isEmpty else { return GCCutoff(cutoffMilliseconds: nil, heldBackBy: nil, neverSynced: never) }
        let oldest = lastSync.compactMap { entry in entry.at.map { (peer: entry.peer, at: $0) } }.min { $0.at < $1.at }
        if let oldest, oldest.at < requested {
            return GCCutoff(cutoffMilliseconds: oldest.at, heldBackBy: (oldest.peer, oldest.at), neverSynced: [])
        }
        return GCCutoff(cutoffMilliseconds: requested, heldBackBy: nil, neverSynced: [])
    }
}

import HPSyncModel
import HPSyncStore

/// `hp-sync status --json`: what the text shows, for monitoring scripts.
extension StatusCommand {
    struct Document: Encodable {
        var store: String
        var nodeID: String
        var storeID: String
        var items: Int
        var tombstones: Int
        var images: Int
        var imageBytes: Int64
        var lastSeq: Int64
        var conflicts: Int
        var peers: [PeerDocument]
        /// With `--check`: the limit in seconds and one line per stale peer (exit 1 if any).
        var check: Check?
    }

    struct PeerDocument: Encodable {
        var name: String
        var lastPull: String?
        var lastPush: String?
        var lastPulledFromUs: String?
        var lastPushedToUs: String?
        var lastError: LastError?
        var lastSuccess: String?
        var staleSeconds: Int64?
    }

    struct LastError: Encodable {
        var at: String?
        var direction: String
        var message: String
    }

    struct Check: Encodable {
        var maxAgeSeconds: Int64
        var stale: [String]
    }

    func runJSON(_ store: Store, _ status: StoreStatus) throws {
        let peers = try store.peers()
        let states = try store.peerSyncStates()
        let now = Int64(store.nowMilliseconds())
        var freshness: [String: Int64?] = [:]
        var documents: [PeerDocument] = []
        for peer in peers {
            let mine = states.filter { $0.peer == peer.name }
            let lastSuccess = mine.compactMap(\.lastSyncedAt).max()
            freshness[peer.name] = lastSuccess
            let failed = mine.filter { $0.lastError != nil }.max { ($0.lastFailureAt ?? 0) < ($1.lastFailureAt ?? 0) }
            func state(_ direction: SyncDirection) -> PeerSyncState? { mine.first { $0.direction == direction } }
            documents.append(
                PeerDocument(
                    name: peer.name, lastPull: Output.isoDate(state(.pull)?.lastSuccessAt),
                    lastPush: Output.isoDate(state(.push)?.lastSuccessAt),
                    lastPulledFromUs: Output.isoDate(state(.pull)?.lastServedAt),
                    lastPushedToUs: Output.isoDate(state(.push)?.lastServedAt),
                    lastError: failed.map {
                        LastError(
                            at: Output.isoDate($0.lastFailureAt), direction: $0.direction.rawValue,
                            message: $0.lastError ?? "")
                    },
                    lastSuccess: Output.isoDate(lastSuccess), staleSeconds: lastSuccess.map { (now - $0) / 1000 }))
        }
        var stale: [String] = []
        if let check { stale = try staleness(peers, freshness: freshness, check: check, now: now) }
        try Output.json(
            Document(
                store: store.directory.path, nodeID: store.nodeID.description, storeID: "\(store.storeID)",
                items: status.items, tombstones: status.tombstones, images: status.images,
                imageBytes: status.imageBytes, lastSeq: status.lastSeq, conflicts: status.conflicts, peers: documents,
                check: check.map { Check(maxAgeSeconds: $0.seconds, stale: stale) }))
        if let check, !stale.isEmpty { throw StalePeers(problems: stale, maxAge: check.description) }
    }
}

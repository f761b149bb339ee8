import ArgumentParser
import HPSyncModel
import HPSyncStore

/// `hp-sync status [--check MAX_AGE]`: the store's identity and counts, and how fresh each
/// peer's sync is; with `--check`, exits 1 when a peer is staler than allowed (for monitoring).
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the store's identity, counts and each peer's last sync.",
        discussion: """
            With --check MAX_AGE (e.g. 2h, 1d, 90m), exits 1 when a checked peer has not synced \
            successfully within MAX_AGE (or never has). The checked peers are those given with \
            --peer, else every peer with an address (the peers this node pulls from or pushes to).
            """)

    @OptionGroup var options: StoreOptions

    @Option(
        help: ArgumentHelp(
            "Exit 1 if a checked peer's last successful pull or push is older than this (90s, 45m, 2h, 1d).",
            valueName: "duration"))
    var check: Age?

    @Option(
        name: .customLong("peer"), help: "A peer to check (repeatable; default: all peers with an address).",
        completion: PeerCompletion.kind)
    var checkedPeers: [String] = []

    @Flag(help: "Print JSON (store, counts, and per peer its last syncs, error and staleness).") var json = false

    func run() throws {
        let store = try options.openStore(blindAllowed: true)
        let status = try store.status()
        if json { return try runJSON(store, status) }
        Output.write(
            """
            store:      \(store.directory.path)
            node ID:    \(store.nodeID)
            store ID:   \(store.storeID)
            items:      \(status.items)
            tombstones: \(status.tombstones)
            images:     \(status.images) (\(status.imageBytes) bytes)
            peers:      \(status.peers)
            conflicts:  \(status.conflicts)\(status.conflicts > 0 ? " (hp-sync conflicts lists them)" : "")
            last seq:   \(status.lastSeq)

            """)
        let peers = try store.peers()
        let states = try store.peerSyncStates()
        let now = Int64(store.nowMilliseconds())
        var freshness: [String: Int64?] = [:]
        for peer in peers {
            let mine = states.filter { $0.peer == peer.name }
            // A session the peer ran with us (its pull from us, its push to us) counts too.
            let lastSuccess = mine.compactMap(\.lastSyncedAt).max()
            freshness[peer.name] = lastSuccess
            Output.write(Self.describe(peer, mine, lastSuccess: lastSuccess, now: now))
        }
        guard let check else { return }
        let stale = try staleness(peers, freshness: freshness, check: check, now: now)
        if !stale.isEmpty { throw StalePeers(problems: stale, maxAge: check.description) }
    }

    /// One line per checked peer that has not synced within `check`.
    func staleness(_ peers: [Peer], freshness: [String: Int64?], check: Age, now: Int64) throws -> [String] {
        for name in checkedPeers where !peers.contains(where: { $0.name == name }) {
            throw StoreError.unknownPeer(name)
        }
        let checked = checkedPeers.isEmpty ? peers.filter { $0.address != nil }.map(\.name) : checkedPeers
        var stale: [String] = []
        for name in checked {
            guard let last = freshness[name] ?? nil else {
                stale.append("\(name) has never synced successfully")
                continue
            }
            let age = (now - last) / 1000
            if age > check.seconds { stale.append("\(name) last synced \(AgeText.describe(seconds: age)) ago") }
        }
        return stale
    }

    static func describe(_ peer: Peer, _ states: [PeerSyncState], lastSuccess: Int64?, now: Int64) -> String {
        func when(_ milliseconds: Int64?) -> String {
            guard let milliseconds else { return "never" }
            return "\(DateText.iso8601(milliseconds: milliseconds)) "
                + "(\(AgeText.describe(seconds: (now - milliseconds) / 1000)) ago)"
        }
        var lines = ["peer \(peer.name):"]
        for direction in SyncDirection.allCases {
            lines.append(
                "  last \(direction.rawValue):  \(when(states.first { $0.direction == direction }?.lastSuccessAt))")
        }
        // Sessions this store served: the peer pulled from us or pushed to us.
        for state in states where state.lastServedAt != nil {
            let what = state.direction == .pull ? "pulled from us" : "pushed to us"
            lines.append("  last \(what): \(when(state.lastServedAt))")
        }
        if let failed = states.filter({ $0.lastError != nil }).max(by: {
            ($0.lastFailureAt ?? 0) < ($1.lastFailureAt ?? 0)
        }) {
            lines.append(
                "  last error: \(when(failed.lastFailureAt)) \(failed.direction.rawValue): \(TerminalText.escaped(failed.lastError!))"
            )
        }
        lines.append(
            "  stale:      \(lastSuccess.map { AgeText.describe(seconds: (now - $0) / 1000) } ?? "never synced")")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Thrown by `status --check` when a peer is staler than allowed, so monitoring sees exit 1.
struct StalePeers: Error, CustomStringConvertible {
    var problems: [String]
    var maxAge: String
    var description: String {
        "stale backup (older than \(maxAge)): " + problems.joined(separator: "; ")
            + "; see each peer's last error above, check the cron job and the network, then run `hp-sync pull PEER`"
    }
}

import HPSyncModel
import HPSyncStore

/// What `hp-sync status` knows, for the page: counts, each peer's last pull and push, how stale,
/// the last error; and the trash.
struct SyncOverview: Sendable {
    var status: StoreStatus
    var nodeID: String
    var peers: [Peer]
    var states: [PeerSyncState]
    var trash: [TrashEntry]
    var now: Int64
}

enum SyncPage {
    static func render(_ overview: SyncOverview, csrf: String, notice: HTML? = nil) -> HTML {
        let status = overview.status
        let peers: HTML =
            overview.peers.isEmpty
            ? "<p class=\"muted\">No peers yet: see <code>hp-sync invite</code> and <code>hp-sync peer join</code>.</p>"
            : peerTable(overview)
        return Layout.page(
            title: "Sync & trash", notice: notice,
            body: """
                <h1>Sync</h1>
                <div class="panel"><dl class="facts">
                <dt>Node ID</dt><dd>\(overview.nodeID)</dd>
                <dt>Items</dt><dd>\(status.items) (\(status.images) with photos, \(status.imageBytes) bytes)</dd>
                <dt>Tombstones</dt><dd>\(status.tombstones)</dd>
                <dt>Last change</dt><dd>seq \(status.lastSeq)</dd>
                </dl></div>
                <h2>Peers</h2>
                \(peers)
                <h2 id="trash">Trash</h2>
                \(trashTable(overview.trash, now: overview.now, csrf: csrf))
                """)
    }

    private static func peerTable(_ overview: SyncOverview) -> HTML {
        let rows = overview.peers.map { peer -> HTML in
            let mine = overview.states.filter { $0.peer == peer.name }
            func last(_ direction: SyncDirection) -> HTML {
                when(mine.first { $0.direction == direction }?.lastSuccessAt, now: overview.now)
            }
            // As `status` counts it: a session the peer ran with us (its pull, its push) counts too.
            let lastSuccess = mine.compactMap(\.lastSyncedAt).max()
            let stale: HTML = lastSuccess.map { "\(ago($0, now: overview.now))" } ?? "never synced"
            let failed = mine.filter { $0.lastError != nil }.max { ($0.lastFailureAt ?? 0) < ($1.lastFailureAt ?? 0) }
            let error: HTML =
                failed.map { "\(when($0.lastFailureAt, now: overview.now)) \($0.direction.rawValue): \($0.lastError)" }
                ?? "none"
            return """
                <tr><td>\(peer.name)</td><td>\(peer.address ?? "—")</td><td>\(peer.permission.rawValue)</td>
                <td>\(last(.pull))</td><td>\(last(.push))</td><td>\(stale)</td><td>\(error)</td></tr>
                """
        }
        return """
            <table id="peers"><thead><tr><th>Peer</th><th>Address</th><th>Permission</th><th>Last pull</th>
            <th>Last push</th><th>Stale for</th><th>Last error</th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }

    private static func trashTable(_ entries: [TrashEntry], now: Int64, csrf: String) -> HTML {
        guard !entries.isEmpty else { return "<p class=\"muted\">The trash is empty.</p>" }
        let rows = entries.prefix(500).map { entry -> HTML in
            """
            <tr><td>\(entry.name)</td><td>\(entry.serialNumber ?? "")</td><td class="num">\(Format.dollars(entry.valueInDollars))</td>
            <td>\(entry.reason.rawValue)</td><td>\(ago(entry.trashedAt, now: now)) ago</td>
            <td><form method="post" action="/trash/restore" class="inline">\(Layout.csrfField(csrf))
            <input type="hidden" name="key" value="\(entry.key.rawValue)"><input type="hidden" name="id" value="\(entry.id)">
            <button type="submit">Restore</button></form></td></tr>
            """
        }
        let more: HTML =
            entries.count > 500
            ? "<p class=\"muted\">The 500 newest of \(entries.count); see <code>hp-sync trash list</code>.</p>" : .empty
        return """
            <table id="trash-entries"><thead><tr><th>Name</th><th>Serial</th><th class="num">Value</th><th>Why</th>
            <th>When</th><th></th></tr></thead><tbody>\(rows)</tbody></table>\(more)
            """
    }

    private static func when(_ milliseconds: Int64?, now: Int64) -> HTML {
        guard let milliseconds else { return "never" }
        return
            "\(String(DateText.iso8601(milliseconds: milliseconds).prefix(19)))Z (\(ago(milliseconds, now: now)) ago)"
    }

    /// "3 min", "5 h", "2 d": enough to judge staleness at a glance. Any time a store can hold
    /// (a trash entry's, written by a broken build) gives text: the difference saturates.
    static func ago(_ milliseconds: Int64, now: Int64) -> String {
        let (difference, overflow) = now.subtractingReportingOverflow(milliseconds)
        let seconds = overflow ? (milliseconds > now ? 0 : Int64.max / 1000) : max(0, difference / 1000)
        switch seconds {
        case ..<60: return "\(seconds) s"
        case ..<3600: return "\(seconds / 60) min"
        case ..<86_400: return "\(seconds / 3600) h"
        default: return "\(seconds / 86_400) d"
        }
    }
}

import HPSyncCrypto
import HPSyncStore

extension SyncClient {
    /// Pulls, but first checks the mass-deletion guard over the whole manifest so that a refused
    /// pull applies nothing at all.
    ///
    /// The sink applies as it goes, so the check must come first. A version-2 server announces on
    /// its first page how many tombstones the session will list; when even all of them could not
    /// trip the guard, that one session applies (the usual hourly pull). Otherwise the session
    /// becomes a preview (manifest only, no records or images) that counts the real deletions,
    /// and a second session applies if the guard allows them. There is no preview when nothing
    /// here could be deleted (an empty store: the first, large backup pays nothing), and no
    /// second session when the preview's manifest was empty.
    /// What changes on the server between the two sessions is not counted by the guard.
    public func pull(
        connecting connect: () throws -> any MessageChannel, serverNodeID: NodeID, peerName: String,
        options: Options = .init(), guard massDeleteGuard: MassDeleteGuard?
    ) throws -> SyncReport {
        if let massDeleteGuard, !options.dryRun {
            // Counting every live item reads the whole table (a tenth of a second at 100,000
            // items); the decisions below only need to know "at least this many".
            if try store.liveItemCount(upTo: 1) > 0 {
                var first = options
                let store = self.store
                first.applyIf = { tombstones in
                    let deleting = Int(clamping: tombstones)
                    let enough = massDeleteGuard.liveItemsNeeded(toJudge: deleting)
                    guard let live = try? store.liveItemCount(upTo: enough) else { return false }
                    return massDeleteGuard.violation(deleting: deleting, liveItems: live) == nil
                }
                var report = try pull(over: connect(), serverNodeID: serverNodeID, peerName: peerName, options: first)
                if !report.dryRun { return report }
                let live = try store.status().items
                try massDeleteGuard.check(deleting: report.deleted.count, liveItems: live, peer: peerName)
                // (A reconciliation can delete here even when the listing is empty.)
                if report.manifestEntries == 0 && report.reconciled.isEmpty {
                    report.dryRun = false
                    return report
                }
            }
        }
        return try pull(over: connect(), serverNodeID: serverNodeID, peerName: peerName, options: options)
    }
}

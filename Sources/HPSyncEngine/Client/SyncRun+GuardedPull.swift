import HPSyncCrypto
import HPSyncStore

extension SyncRun {
    /// Pulls under the mass-deletion guard.
    ///
    /// The verdict rests on the deletions that really arrive: the session that applies counts
    /// them as pages come and stops before the page that would trip the guard, committing only
    /// what came before it (within the limit). What a version-2 server announces on its first
    /// page is a hint that saves work: when even all the tombstones it announces could not trip
    /// the guard, that one session applies (the usual hourly pull); otherwise the session
    /// becomes a preview (manifest only, no records or images) that counts the real deletions,
    /// so that a pull the guard refuses then applies nothing at all, and a second session
    /// applies if the guard allows them (still counting). There is no preview when nothing here
    /// could be deleted (an empty store: the first, large backup pays nothing), and no second
    /// session when the preview's manifest was empty.
    func guardedPull() throws -> SyncReport {
        let client = client
        // The first session's decision only needs to know "at least this many" live items.
        if let massDeleteGuard = plan.massDeleteGuard, !plan.dryRun, try store.liveItemCount(upTo: 1) > 0 {
            var report = try client.pull(
                connecting: connect, serverNodeID: peer.nodeID, peerName: peer.name, plan: plan, asksFirst: true)
            if !report.dryRun { return report }
            let live = try store.liveItemCount()
            try massDeleteGuard.check(deleting: report.deleted.count, liveItems: live, peer: peer.name)
            // (A reconciliation can delete here even when the listing is empty.)
            if report.manifestEntries == 0 && report.reconciled.isEmpty {
                report.dryRun = false
                return report
            }
        }
        return try client.pull(connecting: connect, serverNodeID: peer.nodeID, peerName: peer.name, plan: plan)
    }
}

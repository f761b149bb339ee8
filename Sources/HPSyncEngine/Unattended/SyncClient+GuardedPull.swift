import HPSyncCrypto
import HPSyncStore

extension SyncClient {
    /// Pulls, but first checks the mass-deletion guard over the whole manifest so that a refused
    /// pull applies nothing at all.
    ///
    /// The sink applies page by page, so the check cannot wait for the real pass: a dry-run
    /// session (manifest only, no records or images) counts the deletions first, then a second
    /// session applies. The preview is skipped when nothing here could be deleted (an empty
    /// store: the first, large backup pays nothing), and the second session is skipped when the
    /// manifest was empty (the usual hourly no-op pull costs one session).
    /// What changes on the server between the two sessions is not counted by the guard.
    public func pull(
        connecting connect: () throws -> any MessageChannel, serverNodeID: NodeID, peerName: String,
        options: Options = .init(), guard massDeleteGuard: MassDeleteGuard?
    ) throws -> SyncReport {
        if let massDeleteGuard, !options.dryRun {
            let live = try store.status().items
            if live > 0 {
                var preview = options
                preview.dryRun = true
                preview.progress = nil
                var report = try pull(over: connect(), serverNodeID: serverNodeID, peerName: peerName, options: preview)
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

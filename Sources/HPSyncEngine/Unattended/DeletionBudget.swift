import HPSyncStore

/// The mass-deletion guard as a sink applies it while pages arrive: it counts the deletions
/// the session really brings (winning tombstones that delete a live item, records that turn out
/// deleted, a reconciliation's deletions) and says, before a page is applied, whether the total
/// would still pass. What the source announced is kept only to say so when it was wrong.
///
/// The guard's rule only ever gets stricter as deletions grow (a larger count never passes
/// where a smaller one failed), so stopping at the first page that crosses the limit gives the
/// same verdict as judging the session's whole list of deletions, and what was applied before
/// that page is within the limit.
struct DeletionBudget: Sendable {
    let rule: MassDeleteGuard
    let peer: String
    /// Live items here when the session began: the base of the guard's fraction.
    let liveItems: Int
    /// What the source's first page announced (version 2), if it did.
    var announced: Int64?
    /// Deletions of the pages accepted so far (committed or held for commit).
    private(set) var counted = 0

    init(rule: MassDeleteGuard, peer: String, liveItems: Int) {
        self.rule = rule
        self.peer = peer
        self.liveItems = liveItems
    }

    /// Accepts a page's `deletions`, or throws the refusal when the running total would trip
    /// the guard; then the page must not be applied.
    mutating func admit(_ deletions: Int) throws(MassDeleteRefused) {
        guard deletions > 0 else { return }
        let total = counted + deletions
        if let reason = rule.violation(deleting: total, liveItems: liveItems) {
            throw MassDeleteRefused(
                peer: peer, deleting: total, liveItems: liveItems, reason: reason,
                stoppedAfter: counted, announced: announced.map { Int(clamping: $0) })
        }
        counted = total
    }
}

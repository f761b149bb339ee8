import HPSyncStore

/// Refuses a pull that would delete most of this store: the classic way a backup dies is a
/// source that suddenly looks empty (an `rm` of everything, a bad restore, a wrong disk).
///
/// The rule: a pull is refused when it would delete more than `maxDelete` live items (when set),
/// or more than half of the live items once more than `floor` items would go. The floor keeps
/// small inventories usable: deleting 1 of 1 item (or 10 of 12) is ordinary editing.
public struct MassDeleteGuard: Sendable, Equatable {
    /// An absolute cap on deletions per pull, whatever the store's size; nil for none.
    public var maxDelete: Int?
    /// Deletions up to this many never trip the fraction rule.
    public var floor = 10
    /// The share of live items a pull may delete once past the floor.
    public var maxFraction = 0.5

    public init(maxDelete: Int? = nil) {
        self.maxDelete = maxDelete
    }

    /// Why `deleting` of `liveItems` is too many, or nil when it is acceptable. A `maxDelete`
    /// given decides alone: the person who gave it chose the number, so the fraction rule (the
    /// default for when nobody did) does not second-guess it.
    public func violation(deleting: Int, liveItems: Int) -> String? {
        if let maxDelete {
            return deleting > maxDelete ? "more than --max-delete \(maxDelete)" : nil
        }
        if deleting > floor, Double(deleting) > maxFraction * Double(liveItems) {
            return "more than \(Int(maxFraction * 100))% of the \(liveItems) live items"
        }
        return nil
    }

    /// How many live items are enough to judge `deleting` deletions: with at least this many the
    /// verdict is the same as with any larger number, so a count may stop here.
    public func liveItemsNeeded(toJudge deleting: Int) -> Int {
        if maxDelete != nil { return 0 }
        guard maxFraction > 0 else { return Int.max }
        return Int((Double(deleting) / maxFraction).rounded(.up)) + 1
    }

    /// Throws `MassDeleteRefused` when the guard trips.
    public func check(deleting: Int, liveItems: Int, peer: String) throws {
        if let reason = violation(deleting: deleting, liveItems: liveItems) {
            throw MassDeleteRefused(peer: peer, deleting: deleting, liveItems: liveItems, reason: reason)
        }
    }
}

/// A pull the mass-deletion guard stopped: before anything was applied (after a preview), or
/// in the middle of the session, before the page whose deletions crossed the limit.
public struct MassDeleteRefused: Error, CustomStringConvertible, Equatable {
    public var peer: String
    /// The deletions counted when the guard tripped (the session may hold more after them).
    public var deleting: Int
    public var liveItems: Int
    public var reason: String
    /// Set when the guard stopped the session while it applied: how many deletions the pages
    /// before the stopping one brought (committed, within the limit).
    public var stoppedAfter: Int?
    /// What the source announced it would delete, when it said so.
    public var announced: Int?

    public init(
        peer: String, deleting: Int, liveItems: Int, reason: String, stoppedAfter: Int? = nil, announced: Int? = nil
    ) {
        self.peer = peer
        self.deleting = deleting
        self.liveItems = liveItems
        self.reason = reason
        self.stoppedAfter = stoppedAfter
        self.announced = announced
    }

    public var description: String {
        var text: String
        if let stoppedAfter {
            text =
                "stopped pulling from \(peer): it sent at least \(deleting) deletions of the \(liveItems) live items here "
                + "(\(reason)); the \(stoppedAfter) deletion\(stoppedAfter == 1 ? "" : "s") before that point "
                + "\(stoppedAfter == 1 ? "was" : "were") applied, nothing after it"
        } else {
            text =
                "refused to pull from \(peer): it would delete \(deleting) of \(liveItems) live items here "
                + "(\(reason)); nothing was applied"
        }
        if let announced, announced < deleting {
            text +=
                ". \(peer) announced only \(announced) deletion\(announced == 1 ? "" : "s") and sent more: "
                + "its hp-sync or its store may be faulty"
        }
        return text + ". If the deletions on \(peer) are intended, check them with "
            + "`hp-sync pull \(peer) --dry-run`, then allow this many with "
            + "`hp-sync pull \(peer) --max-delete \(deleting)`, or turn the guard off for one run with "
            + "`hp-sync pull \(peer) --allow-mass-delete`"
    }
}

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

import HPSyncEngine
import HPSyncModel
import HPSyncStore

/// The texts about a store's clock every command may print.
enum ClockText {
    /// The warning for a store whose high-water mark is ahead of this machine's clock.
    static func warning(_ ahead: ClockAhead, recovery: String) -> String {
        if ahead.clockSeemsBehind {
            return "this machine's clock (\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))) is "
                + "probably behind: \(othersEvidence(ahead)). Edits made here are stamped after them, not by this "
                + "clock, and peers whose clocks are right accept them. Set this machine's clock right (NTP); do not "
                + "run `clock reset`, which would demote current versions"
        }
        return
            "this store's clock high-water mark (\(DateText.iso8601(milliseconds: Int64(ahead.highWaterMilliseconds)))) is "
            + "\(duration(ahead.aheadMilliseconds)) ahead of this machine's clock "
            + "(\(DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds)))): edits made here are stamped in the "
            + "future and peers refuse them. If this machine's clock is right, run `\(recovery)` (those edits come "
            + "back stamped now, same content); if it is behind, set it right instead"
    }

    /// "3 versions made by other nodes are stamped up to 365 days after this clock (2026-…)".
    static func othersEvidence(_ ahead: ClockAhead) -> String {
        let latest = ahead.othersLatestMilliseconds ?? ahead.highWaterMilliseconds
        let gap = latest > ahead.nowMilliseconds ? latest - ahead.nowMilliseconds : 0
        return "\(ahead.othersAhead) version\(ahead.othersAhead == 1 ? "" : "s") made by other nodes "
            + "\(ahead.othersAhead == 1 ? "is" : "are") stamped up to \(duration(gap)) after this clock "
            + "(\(DateText.iso8601(milliseconds: Int64(latest))))"
    }

    static func duration(_ milliseconds: UInt64) -> String { ClockSkew.duration(milliseconds) }
}

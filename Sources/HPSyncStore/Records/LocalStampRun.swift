import GRDB
import HPSyncModel

/// A run of consecutive stamps this node issued for its own changes: one row of `localStamp`.
///
/// `clock reset` must restamp above every version this node made below the limit it resets to,
/// including versions it has since replaced here (they may live on a peer that pulled them).
/// Those are in no table of the store, so every local write transaction records the stamps it
/// issued. Within a transaction the stamps are consecutive raw values (`max(now, mark + 1)`,
/// then `mark + 1`), so a run is exact: the highest stamp issued below any limit is
/// `min(highest, limit - 1)` of the highest run that starts below it.
///
/// The table also keeps, as one run per transaction, the stamps of other nodes' versions the
/// transaction saw and did not keep (`ChangeClock.noteUnkept`): the reset must stay above those
/// too. Such a run is not consecutive; one that straddles a limit bounds it at `limit - 1`, which
/// only a transaction that declined both a version below the limit and one from a clock running
/// past it can record.
struct LocalStampRun: Equatable {
    var lowest: UInt64
    var highest: UInt64

    /// How long a run is kept after this machine's clock has passed it. A run matters only to a
    /// reset whose clock reads at most the skew before the run's stamps, so an old run matters
    /// only if this clock runs more than this far ahead, then is corrected to just before it.
    static let retentionMilliseconds: UInt64 = 400 * 86_400_000

    /// Records the runs one transaction issued. A run that continues the one recorded before it
    /// (the same millisecond, or a mark ahead of the clock) extends that row; a transaction that
    /// adds a row also forgets the runs older than the retention, so the table only shrinks
    /// when it grows.
    static func record(_ runs: [LocalStampRun], now: UInt64, _ db: Database) throws {
        let extend = try db.cachedStatement(
            sql: """
                UPDATE localStamp SET highest = ?2
                WHERE lowest = (SELECT MAX(lowest) FROM localStamp WHERE lowest < ?1) AND highest = ?1 - 1
                """)
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO localStamp (lowest, highest) VALUES (?, ?)
                ON CONFLICT (lowest) DO UPDATE SET highest = max(highest, excluded.highest)
                """)
        var added = false
        for run in runs {
            let arguments: StatementArguments = [Int64(bitPattern: run.lowest), Int64(bitPattern: run.highest)]
            try extend.execute(arguments: arguments)
            guard db.changesCount == 0 else { continue }
            try insert.execute(arguments: arguments)
            added = true
        }
        guard added, now > retentionMilliseconds else { return }
        let cutoff = Int64(bitPattern: VersionStamp(milliseconds: now - retentionMilliseconds).rawValue)
        try db.cachedStatement(sql: "DELETE FROM localStamp WHERE lowest < ? AND highest < ?")
            .execute(arguments: [cutoff, cutoff])
    }

    /// The highest stamp this node issued below `limit` (of those the store has recorded), or
    /// zero when there is none.
    static func highestIssued(below limit: VersionStamp, _ db: Database) throws -> VersionStamp {
        guard limit.rawValue > 0 else { return .zero }
        let highest = try Int64.fetchOne(
            db, sql: "SELECT MAX(min(highest, ?)) FROM localStamp WHERE lowest < ?",
            arguments: [Int64(bitPattern: limit.rawValue - 1), Int64(bitPattern: limit.rawValue)])
        return VersionStamp(rawValue: UInt64(bitPattern: highest ?? 0))
    }
}

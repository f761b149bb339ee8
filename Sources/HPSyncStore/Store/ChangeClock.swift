import GRDB
import HPSyncModel

/// The hybrid logical clock and change counter of one write transaction.
///
/// Loaded from `meta` at the start of a transaction, advanced in memory for every change, and
/// saved back before commit, so stamps, seqs and the rows that carry them commit together.
struct ChangeClock {
    private(set) var meta: MetaRecord
    let nowMilliseconds: UInt64
    /// The stamps this transaction issued for local changes, as runs of consecutive raw values
    /// (one run, unless the mark moved between issues). Saved to `localStamp`.
    private var issued: [LocalStampRun] = []
    /// The stamps of the versions those changes replaced, kept apart so that the issued stamps
    /// stay one run (one row for an `rm` of many keys). Saved to `localStamp` too: `clock reset`
    /// must restamp above both.
    private var replaced: [LocalStampRun] = []
    /// The stamps of versions from other nodes this transaction saw and did not keep as their
    /// key's row (an older record declined or joined into a newer state, an entry the caller
    /// declined), as one run from the lowest to the highest. Saved to `localStamp` too: such a
    /// version may still live on its maker, so `clock reset` must restamp above it, which
    /// `remoteMark` alone cannot say once a stamp from a clock running ahead raised it past the
    /// reset's limit.
    private var unkept: LocalStampRun?

    init(_ db: Database, now: UInt64) throws {
        meta = try MetaRecord.load(db)
        nowMilliseconds = now
    }

    /// The stamp for a local change: `max(now, highest seen + 1)`, so it never goes backwards.
    mutating func nextLocalStamp() -> VersionStamp {
        let wall = VersionStamp(milliseconds: nowMilliseconds)
        let next = max(wall.rawValue, meta.highWater.rawValue &+ 1)
        meta.highWater = VersionStamp(rawValue: next)
        if let last = issued.indices.last, issued[last].highest &+ 1 == next {
            issued[last].highest = next
        } else {
            issued.append(LocalStampRun(lowest: next, highest: next))
        }
        return meta.highWater
    }

    /// The stamp for a local change that replaces the version stamped `previous`, which is
    /// remembered too: should a `clock reset` restamp this change, it must stay above the
    /// version it replaced (that version may still live on its maker), even when no mark
    /// remembers it (one received beside it from a clock running ahead raised the mark past the
    /// reset's limit).
    mutating func nextLocalStamp(replacing previous: VersionStamp) -> VersionStamp {
        if previous.rawValue > 0 {
            replaced.append(LocalStampRun(lowest: previous.rawValue, highest: previous.rawValue))
        }
        return nextLocalStamp()
    }

    /// Raises the high-water mark, and the mark of stamps received from other nodes, to a stamp
    /// seen from elsewhere.
    mutating func observe(_ stamp: VersionStamp) {
        if stamp > meta.highWater { meta.highWater = stamp }
        if stamp > meta.remoteMark { meta.remoteMark = stamp }
    }

    /// Raises the mark of stamps received from other nodes to a version a peer offered and this
    /// store declined (its own is newer, so the high-water mark is already above it).
    mutating func observeDeclined(_ stamp: VersionStamp) {
        if stamp > meta.remoteMark { meta.remoteMark = stamp }
    }

    /// Remembers the stamps from `lowest` to `highest` as seen and not kept (see `unkept`).
    mutating func noteUnkept(_ lowest: VersionStamp, _ highest: VersionStamp) {
        guard lowest.rawValue > 0, lowest <= highest else { return }
        if let run = unkept {
            unkept = LocalStampRun(
                lowest: min(run.lowest, lowest.rawValue), highest: max(run.highest, highest.rawValue))
        } else {
            unkept = LocalStampRun(lowest: lowest.rawValue, highest: highest.rawValue)
        }
    }

    /// Lowers the high-water mark (only `Store.resetClock`, which restamps every version above it).
    mutating func resetHighWater(to stamp: VersionStamp) {
        meta.highWater = stamp
    }

    /// The next change sequence number of this store.
    mutating func nextSeq() -> Int64 {
        meta.lastSeq += 1
        return meta.lastSeq
    }

    /// Hands back the number `nextSeq` just gave, which no row took.
    mutating func returnSeq(_ seq: Int64) {
        precondition(seq == meta.lastSeq, "only the last sequence number taken can be given back")
        meta.lastSeq -= 1
    }

    func save(_ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: "UPDATE meta SET hlcHighWater = ?, lastSeq = ?, remoteHighWater = ? WHERE id = 1")
        try statement.execute(arguments: [meta.hlcHighWater, meta.lastSeq, meta.remoteHighWater])
        if !issued.isEmpty || !replaced.isEmpty || unkept != nil {
            try LocalStampRun.record(issued + replaced + (unkept.map { [$0] } ?? []), now: nowMilliseconds, db)
        }
    }
}

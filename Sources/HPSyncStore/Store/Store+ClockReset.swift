import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// When this node's clock ran ahead and was then corrected, its hybrid-clock high-water mark
/// stays in the future: every new edit is stamped there, and every peer refuses it until the
/// real time catches up. `resetClock()` brings the mark back to now without losing anything.
extension Store {
    /// How far this store's high-water mark is ahead of this machine's clock, when more than the
    /// allowed skew; nil when it is not.
    public func clockAhead() throws -> ClockAhead? {
        let now = clock.nowMilliseconds()
        let skew = configuration.maxClockSkewMilliseconds
        return try read { db in
            let highWater = try MetaRecord.load(db).highWater
            guard highWater.milliseconds > now &+ skew else { return nil }
            // Versions other nodes stamped beyond our clock: their clocks reached a time ours
            // has not, so ours is probably behind (only both clocks having run ahead together
            // explains them otherwise).
            let limit = VersionStamp(milliseconds: now &+ skew + 1)
            let others = try Row.fetchOne(
                db, sql: "SELECT COUNT(*), MAX(stamp) FROM item WHERE stamp >= ? AND origin != ?",
                arguments: [Int64(bitPattern: limit.rawValue), Data(nodeID.bytes)])
            let count: Int = others?[0] ?? 0
            let latest: Int64? = others?[1]
            return ClockAhead(
                highWaterMilliseconds: highWater.milliseconds, nowMilliseconds: now, skewMilliseconds: skew,
                othersAhead: count,
                othersLatestMilliseconds: count > 0
                    ? latest.map { VersionStamp(rawValue: UInt64(bitPattern: $0)).milliseconds } : nil)
        }
    }

    /// Restamps, in one transaction, every version stamped more than the allowed skew ahead of
    /// this machine's clock as a fresh edit of this node stamped now, or just above the newest
    /// stamp received from another node or issued by this one below that limit when that is
    /// later (same content, next seq), and brings the high-water mark back there. Only right
    /// when this machine's clock is right: with a clock that is behind, it would demote current
    /// versions.
    ///
    /// A version another node stamped in the future (accepted while this node's clock was ahead
    /// too) is restamped as well: the mark must stay above every stamp the store holds, or a later
    /// local edit of that key could lose to the version it replaces.
    public func resetClock() throws -> ClockReset {
        let now = clock.nowMilliseconds()
        let limit = VersionStamp(milliseconds: now &+ configuration.maxClockSkewMilliseconds + 1)
        return try write { db in
            var changeClock = try ChangeClock(db, now: now)
            let before = changeClock.meta.highWater
            let future = try ItemRecord.fetchAll(
                db, sql: "SELECT \(ItemRecord.selection) FROM item WHERE stamp >= ? ORDER BY stamp",
                arguments: [Int64(bitPattern: limit.rawValue)])
            let remaining =
                try Int64.fetchOne(
                    db, sql: "SELECT MAX(stamp) FROM item WHERE stamp < ?",
                    arguments: [Int64(bitPattern: limit.rawValue)])
                ?? 0
            // Above every stamp another node made that this store saw within the limit, held,
            // since replaced (the version a restamped one replaced may still live on its maker)
            // or never kept (an older version declined or joined into a newer one: recorded
            // beside the issued stamps, as `remoteMark` forgets it once a stamp from a clock
            // running ahead passed the limit), and above every stamp this node issued below the
            // limit, held or since replaced here (it may have reached a peer before the clock
            // went ahead), so the restamped versions win everywhere and never reissue a version.
            // A received stamp beyond the limit (other clocks ran ahead too: the case `clock
            // reset` refuses without --force) bounds nothing.
            let received = changeClock.meta.remoteMark
            let issued = try LocalStampRun.highestIssued(below: limit, db)
            changeClock.resetHighWater(
                to: max(
                    VersionStamp(milliseconds: now), VersionStamp(rawValue: UInt64(remaining)),
                    received < limit ? received : .zero, issued))
            var origins = OriginCache()
            var restamped: [ClockReset.Restamp] = []
            for row in future {
                var item = try row.item(origins: &origins)
                let old = item.version
                if row.deleted, row.fields != nil {
                    // A tombstone holding fields keeps them, restamped (Protocol.md 5.9).
                    let fieldsVersion = Version(stamp: changeClock.nextLocalStamp(), origin: nodeID)
                    item.version = Version(stamp: changeClock.nextLocalStamp(), origin: nodeID)
                    let state: ItemMergeState
                    do {
                        state = try Self.mergeState(db, row).restampedTombstone(
                            fieldsAt: fieldsVersion, deletedAt: item.version)
                    } catch {
                        throw StoreError.database("item \(item.key): \(error)")
                    }
                    try Self.writeMergeState(db, state, seq: changeClock.nextSeq(), previous: row)
                } else {
                    item.version = Version(stamp: changeClock.nextLocalStamp(), origin: nodeID)
                    // Restamped whole: a version below the one it replaces cannot be a field edit.
                    try ItemRecord(item, seq: changeClock.nextSeq()).write(db)
                    if row.fields != nil { try ConflictRecord.deleteAll(db, key: item.key) }
                }
                restamped.append(ClockReset.Restamp(key: item.key, old: old, new: item.version))
            }
            try changeClock.save(db)
            return ClockReset(restamped: restamped, highWaterBefore: before, highWaterAfter: changeClock.meta.highWater)
        }
    }
}

/// This store's high-water mark is ahead of this machine's clock by more than the skew.
public struct ClockAhead: Sendable, Equatable {
    public var highWaterMilliseconds: UInt64
    public var nowMilliseconds: UInt64
    public var skewMilliseconds: UInt64
    /// How many versions made by other nodes are stamped beyond this clock (plus the skew).
    public var othersAhead: Int = 0
    /// The latest of those stamps, when there are any.
    public var othersLatestMilliseconds: UInt64?

    public var aheadMilliseconds: UInt64 { highWaterMilliseconds - nowMilliseconds }

    /// The evidence says this machine's clock is behind rather than the mark left ahead: other
    /// nodes stamped versions at times this clock has not reached. A reset would then demote
    /// current versions below what their makers stamp next.
    public var clockSeemsBehind: Bool { othersAhead > 0 }
}

/// What `resetClock()` did.
public struct ClockReset: Sendable, Equatable {
    public struct Restamp: Sendable, Equatable {
        public var key: ItemKey
        public var old: Version
        public var new: Version
    }

    public var restamped: [Restamp]
    public var highWaterBefore: VersionStamp
    public var highWaterAfter: VersionStamp
}

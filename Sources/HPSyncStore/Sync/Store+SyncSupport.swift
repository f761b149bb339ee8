import GRDB
import HPSyncModel

/// What the sync engine needs to see of a store's configuration and clock.
extension Store {
    /// The clock guard: why a version made elsewhere is refused (stamped more than the allowed
    /// skew ahead of this store's clock), or nil when it may be applied.
    package func clockGuardRefusal(_ version: Version) -> String? {
        clockGuardRefusal(version, now: clock.nowMilliseconds())
    }

    func clockGuardRefusal(_ version: Version, now: UInt64) -> String? {
        let stamped = version.stamp.milliseconds
        guard stamped > now &+ configuration.maxClockSkewMilliseconds else { return nil }
        return "stamped \((stamped - now) / 1000) s in the future by node \(version.origin.short), beyond the "
            + "allowed clock skew of \(configuration.maxClockSkewMilliseconds / 1000) s. That node's clock is or "
            + "was ahead: fix it there; if it is right again, run `hp-sync clock reset --yes` there (its future "
            + "edits come back stamped now). The record is retried at the next sync"
    }

    /// How far ahead of this store's clock a received stamp may be.
    package var maxClockSkewMilliseconds: UInt64 { configuration.maxClockSkewMilliseconds }

    /// The largest image this store accepts.
    package var maxImageBytes: Int64 { configuration.maxImageBytes }

    /// This store's wall clock (injected in tests), in milliseconds since 1970.
    package func nowMilliseconds() -> UInt64 { clock.nowMilliseconds() }

    /// Whether this store has no item rows and no GC horizon (whose virtual tombstone every
    /// key without a row would meet): a version received now has nothing here to merge with.
    package func hasNothingToMergeWith() throws -> Bool {
        try read { db in
            guard try MetaRecord.load(db).gcHorizon.virtualTombstone == nil else { return false }
            return try !(Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item)") ?? false)
        }
    }

    /// Records how far a peer store has been synced, in one transaction of its own.
    package func setCheckpoint(_ update: CheckpointUpdate) throws {
        _ = try applyRemote([], checkpoint: update)
    }
}

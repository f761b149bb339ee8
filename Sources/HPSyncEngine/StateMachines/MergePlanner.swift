import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// What a sink will do with one manifest page, decided by the merge rule alone.
public struct PagePlan: Sendable, Equatable {
    /// Winning tombstones: applied straight from the manifest, nothing to fetch.
    public var tombstones: [Item] = []
    /// Winning live versions whose records must be fetched.
    public var fetch: [ItemKey] = []
    /// Classification for reports and --dry-run.
    public var inserted: [ItemKey] = []
    public var updated: [ItemKey] = []
    public var deleted: [ItemKey] = []
    /// Tombstones for keys that are not live here (recorded so they propagate).
    public var tombstonesRecorded: [ItemKey] = []
    /// Entries that do not beat the local version.
    public var skipped = 0
}

/// Applies the merge rule to a page: the greater `(stamp, origin)` wins, everywhere.
public enum MergePlanner {
    /// `local` holds this store's current rows (tombstones included) of the page's keys.
    ///
    /// `mergesFields` (version 5): an entry whose merge digest differs from the local one is
    /// fetched even when its version is not newer, as its state may hold what the local one
    /// lacks (Protocol.md 5.9); so is a live entry older than a local tombstone that keeps no
    /// fields (both digests are 0, yet the tombstone keeps the entry's fields once joined), and
    /// a newer tombstone that keeps fields.
    public static func plan(_ page: ManifestPage, local: [ItemKey: Item], mergesFields: Bool = false) -> PagePlan {
        var plan = PagePlan()
        for entry in page.entries {
            let mine = local[entry.key]
            let liveHere = mine.map { !$0.deleted } ?? false
            if let mine, entry.version <= mine.version {
                if mergesFields && (entry.mergeDigest != mine.mergeDigest || Self.keeps(entry.deleted, mine)) {
                    // Not newer, but its state may hold what this one lacks: fetched and joined.
                    plan.fetch.append(entry.key)
                    if liveHere { plan.updated.append(entry.key) }
                } else {
                    plan.skipped += 1
                }
                continue
            }
            if entry.deleted {
                // A tombstone that keeps fields is fetched for them (Protocol.md 5.9), unless
                // they are exactly the live item's here: joined with it, it is the tombstone.
                if !mergesFields || entry.mergeDigest == 0
                    || (liveHere && entry.mergeDigest == mine?.candidatesDigest)
                {
                    plan.tombstones.append(Item.tombstone(key: entry.key, version: entry.version))
                } else {
                    plan.fetch.append(entry.key)
                }
                if liveHere { plan.deleted.append(entry.key) } else { plan.tombstonesRecorded.append(entry.key) }
            } else {
                plan.fetch.append(entry.key)
                if liveHere { plan.updated.append(entry.key) } else { plan.inserted.append(entry.key) }
            }
        }
        return plan
    }

    /// True when `incoming` should be applied: it replaces what the store holds when newer (the
    /// same rule, for records), or, with `mergesFields`, joins it when its state differs.
    public static func wins(_ incoming: Item, over local: Item?, mergesFields: Bool = false) -> Bool {
        guard let local else { return true }
        if incoming.version > local.version { return true }
        return mergesFields && (incoming.mergeDigest != local.mergeDigest || keeps(incoming.deleted, local))
    }

    /// Whether `local`, a tombstone that keeps no fields (merge digest 0, as a whole live
    /// record's), gains fields by joining an older live version: the tombstone keeps them for a
    /// later revival (Protocol.md 5.9).
    static func keeps(_ incomingDeleted: Bool, _ local: Item) -> Bool {
        !incomingDeleted && local.deleted && local.mergeState == nil
    }
}

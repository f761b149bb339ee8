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
    public static func plan(_ page: ManifestPage, local: [ItemKey: Item]) -> PagePlan {
        var plan = PagePlan()
        for entry in page.entries {
            let mine = local[entry.key]
            if let mine, entry.version <= mine.version {
                plan.skipped += 1
                continue
            }
            let liveHere = mine.map { !$0.deleted } ?? false
            if entry.deleted {
                plan.tombstones.append(Item.tombstone(key: entry.key, version: entry.version))
                if liveHere { plan.deleted.append(entry.key) } else { plan.tombstonesRecorded.append(entry.key) }
            } else {
                plan.fetch.append(entry.key)
                if liveHere { plan.updated.append(entry.key) } else { plan.inserted.append(entry.key) }
            }
        }
        return plan
    }

    /// True when `incoming` should replace what the store holds (the same rule, for records).
    public static func wins(_ incoming: Version, over local: Item?) -> Bool {
        guard let local else { return true }
        return incoming > local.version
    }
}

import HPSyncProtocol

/// When a version-2 sink commits what it holds: at the final page, or once the pages it holds
/// list `limit` entries or their images `imageBytes` bytes, whichever comes first.
///
/// A bulk pull (into a store that began empty, or `bulkLimit` or more announced) doubles the
/// entries of each batch up to `bulkLimit`: fewer, larger transactions, each of which rewrites
/// most leaves of the random-key index once. Every batch also commits once it has gathered for
/// `interval` milliseconds, so durable progress keeps a steady pace. Two batches are in memory
/// at once (one gathering, one committing): at L (1M items, idle) 20,000 took the client
/// 22–24 s and 106 MB peak RSS, 40,000 19–21 s and 139–148 MB.
///
/// The policy is the sink's state, not its configuration: it learns on the first page whether
/// the pull is bulk, and its limit grows as batches fill.
struct BatchPolicy {
    static let entries = 10_000
    static let bulkEntries = 20_000
    static let imageBytes: Int64 = 64 << 20
    static let interval: UInt64 = 4_000
    /// Once the pages listed come within this many entries of the source's announced total,
    /// the batch held commits at once (`reachesTail`): the final page's commit, which the
    /// session waits for before its last PageDone, then holds only the last pages, and the
    /// larger batch before it commits while they arrive. Two pages' worth.
    static let tailEntries = 2 * ProtocolLimits.manifestPageSize
    /// A page's records that need no image bytes commit ahead of its images when at least
    /// this many (`SinkStateMachine.commitAheadOfImages`); fewer are not worth a transaction.
    static let aheadOfImages = 128

    /// How many entries the pages held may list before they are committed.
    private(set) var limit: Int
    /// A bulk pull's batches grow from `commitEvery` entries to this many.
    let bulkLimit: Int
    /// Commit once the batch has gathered pages this many milliseconds.
    let interval: UInt64
    /// Commit what is held once the pages listed come within this many entries of the total.
    let tailEntries: Int
    /// Whether this is a bulk pull, decided on the first page.
    private(set) var isBulk = false
    /// Whether the batch before the session's last pages was committed (`reachesTail`).
    private(set) var tailCommitted = false
    /// What the source's first page announced (version 2); nil when it did not.
    private(set) var totalEntries: Int?

    init(
        commitEvery: Int = Self.entries, bulkLimit: Int = Self.bulkEntries, interval: UInt64 = Self.interval,
        tailEntries: Int = Self.tailEntries
    ) {
        self.limit = commitEvery
        self.bulkLimit = bulkLimit
        self.interval = interval
        self.tailEntries = tailEntries
    }

    /// The first page is in: a store that began empty, or a large announced total, makes the
    /// pull bulk.
    mutating func start(startsEmpty: Bool, announcedEntries: Int?) {
        totalEntries = announcedEntries
        isBulk = startsEmpty || (announcedEntries ?? 0) >= bulkLimit
    }

    /// The room a bulk batch reserves once, when it starts: it fills up to the limit and a page.
    var bulkReservation: Int? {
        isBulk ? min(limit, Self.bulkEntries) + ProtocolLimits.manifestPageSize : nil
    }

    /// Whether the batch holding `held` entries and `imageBytes` of images, gathering for
    /// `elapsed` milliseconds, commits now that the session's pages listed `listed` entries.
    /// A full batch of a bulk pull doubles the next one's limit.
    mutating func commitsNow(held: Int, imageBytes: Int64, elapsed: UInt64, listed: Int, isFinal: Bool) -> Bool {
        let full = held >= limit
        guard
            isFinal || full || imageBytes >= Self.imageBytes || elapsed >= interval
                || reachesTail(held: held, listed: listed)
        else { return false }
        if full, isBulk { limit = min(limit * 2, max(bulkLimit, limit)) }
        return true
    }

    /// Whether the pages listed have come within `tailEntries` of the source's announced total
    /// while the batch holds more than that: it then commits once, in the background, so that
    /// the final commit, which the last PageDone waits for, holds only the pages still to come.
    private mutating func reachesTail(held: Int, listed: Int) -> Bool {
        guard !tailCommitted, let total = totalEntries, total > tailEntries, held > tailEntries,
            listed >= total - tailEntries
        else { return false }
        tailCommitted = true
        return true
    }
}

import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// What a sink does not apply in a session, and why: entries and records its clock guard
/// refuses, records withheld because their image cannot be had. It keeps the checkpoint before
/// the first of them, so a later session retries them: the sink's own checkpoint in a pull, the
/// pushing source's through `PageDone.first_held_seq` (version 3). It lists each page's
/// refusals for that page's PageDone.
struct SinkHolds {
    /// The highest checkpoint allowed: the seq before the first entry held; nil for none.
    private(set) var checkpointLimit: Int64?
    /// This page's refusals, for its PageDone.
    private(set) var pageRefusals: [PageRefusal] = []

    /// `PageDone.first_held_seq`: the first entry held, or 0.
    var firstHeldSeq: Int64 { checkpointLimit.map { $0 + 1 } ?? 0 }

    mutating func startPage() { pageRefusals = [] }

    /// Splits a page into the entries the clock guard accepts and those it refuses (`refusals`,
    /// by index in ascending order), and holds the checkpoint before the first refused.
    mutating func screen(_ page: ManifestPage, refusals: [SinkStateMachine.ClockRefusal])
        -> (accepted: [ManifestEntry], refused: [PageRefusal])
    {
        guard let first = refusals.first else { return (page.entries, []) }
        var accepted: [ManifestEntry] = []
        accepted.reserveCapacity(page.entries.count - refusals.count)
        var refused: [PageRefusal] = []
        var next = 0
        for (index, entry) in page.entries.enumerated() {
            if next < refusals.count, refusals[next].index == index {
                refused.append(PageRefusal(key: entry.key, reason: refusals[next].reason))
                next += 1
            } else {
                accepted.append(entry)
            }
        }
        pageRefusals += refused
        hold(seq: page.entries[first.index].seq)
        return (accepted, refused)
    }

    /// Records, for the PageDone, that the clock guard refused this record (which can be newer
    /// than its entry). The caller holds the checkpoint with `hold(before:in:)`.
    mutating func refused(_ record: Item, because reason: String) {
        pageRefusals.append(PageRefusal(key: record.key, reason: reason))
    }

    /// Keeps the checkpoint before the first of `keys` on this page.
    mutating func hold(before keys: [ItemKey], in page: ManifestPage) {
        let held = Set(keys)
        guard !held.isEmpty, let first = page.entries.first(where: { held.contains($0.key) }) else { return }
        hold(seq: first.seq)
    }

    /// The checkpoint for a page through `throughSeq`.
    func checkpoint(through throughSeq: Int64) -> Int64 { checkpointLimit ?? throughSeq }

    private mutating func hold(seq: Int64) {
        checkpointLimit = min(checkpointLimit ?? Int64.max, seq - 1)
    }
}

import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// What a sink does not apply in a session, and why: entries and records its clock guard
/// refuses, records withheld because their image cannot be had. It keeps the checkpoint before
/// the first of them, so a later session retries them: the sink's own checkpoint in a pull, the
/// pushing source's through `PageDone.first_held_seq` (version 3). It lists each page's
/// refusals for that page's PageDone.
struct SinkHolds {
    /// Why the clock guard refuses a version, worded for the user; nil when it may be applied.
    private let refusal: (Version) -> String?
    /// The highest checkpoint allowed: the seq before the first entry held; nil for none.
    private(set) var checkpointLimit: Int64?
    /// This page's refusals, for its PageDone.
    private(set) var pageRefusals: [PageRefusal] = []

    init(refusal: @escaping (Version) -> String?) {
        self.refusal = refusal
    }

    /// `PageDone.first_held_seq`: the first entry held, or 0.
    var firstHeldSeq: Int64 { checkpointLimit.map { $0 + 1 } ?? 0 }

    mutating func startPage() { pageRefusals = [] }

    /// Splits a page into the entries the clock guard accepts and those it refuses, and holds
    /// the checkpoint before the first refused.
    mutating func screen(_ page: ManifestPage) -> (accepted: [ManifestEntry], refused: [PageRefusal]) {
        var accepted: [ManifestEntry] = []
        var refused: [PageRefusal] = []
        var firstRefused: Int64?
        for entry in page.entries {
            if let reason = refusal(entry.version) {
                refused.append(PageRefusal(key: entry.key, reason: reason))
                firstRefused = firstRefused ?? entry.seq
            } else {
                accepted.append(entry)
            }
        }
        pageRefusals += refused
        if let firstRefused { hold(seq: firstRefused) }
        return (accepted, refused)
    }

    /// Why the clock guard refuses this record (which can be newer than its entry), recorded
    /// for the PageDone; nil when it may be applied. The caller holds the checkpoint with
    /// `hold(before:in:)`.
    mutating func refuses(_ record: Item) -> String? {
        guard let reason = refusal(record.version) else { return nil }
        pageRefusals.append(PageRefusal(key: record.key, reason: reason))
        return reason
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

import HPSyncModel
import HPSyncProtocol
import HPSyncStore

// The pending batch: held, committed, and the PageDone that reports it.
extension SinkStateMachine {
    /// The commit or wait asked for is done: continues the page.
    mutating func proceed() -> Action {
        continuing { $0.resume(&$1) }
    }

    /// A batch ended committed: counts it and moves the durable point past it. A batch
    /// committed ahead of its page's images carries the durable point it was sealed with, which
    /// a batch before it may have passed meanwhile: the point never moves back.
    mutating func batchCommitted(_ committed: BatchCommitter.Committed) {
        if !committing.isEmpty { committing.removeFirst() }
        let outcome = committed.outcome
        durableSeq = max(durableSeq, committed.throughSeq)
        report.reconciled += outcome.reconciled.map(\.rawValue)
        report.inserted += outcome.inserted.map(\.rawValue)
        report.updated += outcome.updated.map(\.rawValue)
        report.deleted += outcome.deleted.map(\.rawValue)
        report.tombstonesRecorded += outcome.tombstonesRecorded.count
        report.skipped += outcome.skipped.count
        report.refused += outcome.refused.map { SyncReport.Refusal(key: $0.key.rawValue, reason: $0.reason) }
    }

    /// Adds the page to the pending batch, and commits it when the batch is full, the page is
    /// final, or the version commits each page.
    mutating func holdPage(_ work: inout PageWork) -> Action {
        let page = work.page
        holds.hold(before: work.withheld, in: page)
        let now = uptime()
        let version = configuration.version
        if work.pending.lastPage == nil {
            work.pending.startedAt = now
            if version >= 2, let reservation = batches.bulkReservation { work.pending.reserve(entries: reservation) }
        }
        receivedItems += work.pending.add(work.incoming, local: work.local)
        work.pending.entries += page.entries.count
        if let step = work.step { work.pending.add(step) }
        work.pending.lastPage = page
        guard
            version < 2
                || batches.commitsNow(
                    held: work.pending.entries, imageBytes: work.pending.imageBytes,
                    elapsed: now &- work.pending.startedAt, listed: entriesListed, isFinal: page.isFinal)
        else { return finishPage(&work) }
        // Version 1 acknowledges each page as applied; the final page needs everything durable;
        // a reconciliation keeps to one step at a time.
        work.next = .finishPage
        return commitPending(&work, wait: version < 2 || page.isFinal || reconciling != nil)
    }

    mutating func finishPage(_ work: inout PageWork) -> Action {
        if isPreview { durableSeq = work.page.throughSeq }  // nothing to apply is applied
        work.next = .sendPageDone
        return .commit(.poll)
    }

    /// Seals what the session holds into one transaction with the checkpoint of the last page.
    mutating func commitPending(_ work: inout PageWork, wait: Bool) -> Action {
        let checkpoint = work.pending.lastPage.flatMap(checkpointUpdate)
        guard let batch = work.pending.sealed(checkpoint: checkpoint) else {
            return wait ? .commit(.wait) : resume(&work)
        }
        work.pending = PendingBatch()
        if sessionKeys != nil { for key in batch.keys { sessionKeys?.insert(key) } }
        committing.append(InFlight(keys: batch.keys, mayRemoveImages: batch.mayRemoveImages))
        return .commit(.submit(batch, wait: wait))
    }

    private mutating func resume(_ work: inout PageWork) -> Action {
        switch work.next {
        case .settleKeys: return settleKeys(&work)
        case .readLocal: return readLocal(&work)
        case .planImages: return planImages(&work)
        case .requestImages: return requestImages(&work)
        case .finishPage: return finishPage(&work)
        case .sendPageDone: return .sendPageDone(pageDone(work.page))
        case .fail(let error): return .fail(error)
        }
    }

    private func checkpointUpdate(_ page: ManifestPage) -> CheckpointUpdate? {
        guard let target = configuration.checkpoint, !isPreview else { return nil }
        return CheckpointUpdate(
            peerStore: target.store, direction: target.direction, seq: holds.checkpoint(through: page.throughSeq))
    }

    /// The PageDone for `page`. From version 3 it says where the first entry the session did not
    /// apply is, so a pushing source keeps its checkpoint below it, and what this page refused.
    private func pageDone(_ page: ManifestPage) -> Message {
        let durable = configuration.version >= 2 ? durableSeq : 0
        guard configuration.version >= ProtocolLimits.heldEntriesVersion else {
            return .pageDone(throughSeq: page.throughSeq, counts: report.counts, durableSeq: durable)
        }
        return .pageDone(
            throughSeq: page.throughSeq, counts: report.counts, durableSeq: durable,
            firstHeldSeq: holds.firstHeldSeq, refusals: holds.pageRefusals)
    }
}

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

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

    /// The PageDone went out: the next page, or the end.
    mutating func pageDoneSent() -> Action {
        guard case .working(let work) = state else { preconditionFailure("PageDone with no page in hand") }
        if pageApplied() {
            state = .finished
            return .finished
        }
        state = .awaitingPage(work.pending)
        return .receive
    }

    /// Records that the page's PageDone went out; true when it was the last.
    mutating func pageApplied() -> Bool { frames.pageApplied() }

    /// Adds the page to the pending batch, and commits it when the batch is full, the page is
    /// final, or the version commits each page.
    mutating func holdPage(_ work: inout PageWork) -> Action {
        let page = work.page
        holds.hold(before: work.withheld, in: page)
        let now = configuration.uptime()
        let version = configuration.version
        if work.pending.lastPage == nil {
            work.pending.startedAt = now
            // A bulk batch fills up: its room once, bounded by the batch limit (ours) and a page.
            if isBulk, version >= 2 {
                work.pending.reserve(entries: min(batchLimit, Batch.bulkEntries) + ProtocolLimits.manifestPageSize)
            }
        }
        receivedItems += work.pending.add(work.incoming, local: work.local)
        work.pending.entries += page.entries.count
        if let step = work.step { work.pending.add(step) }
        work.pending.lastPage = page
        let full = work.pending.entries >= batchLimit
        guard
            version < 2 || page.isFinal || full || work.pending.imageBytes >= Batch.imageBytes
                || now &- work.pending.startedAt >= configuration.commitInterval || reachesTail(work)
        else { return finishPage(&work) }
        if full, isBulk { batchLimit = min(batchLimit * 2, max(configuration.bulkCommitEvery, batchLimit)) }
        // Version 1 acknowledges each page as applied; the final page needs everything durable;
        // a reconciliation keeps to one step at a time.
        work.next = .finishPage
        return commitPending(&work, wait: version < 2 || page.isFinal || reconciling != nil)
    }

    /// Whether the pages listed have come within `tailEntries` of the source's announced total
    /// while the batch holds more than that: it then commits once, in the background, so that
    /// the final commit, which the last PageDone waits for, holds only the pages still to come.
    private mutating func reachesTail(_ work: PageWork) -> Bool {
        let tail = configuration.tailEntries
        guard !tailCommitted, let total = totalEntries, total > tail, work.pending.entries > tail,
            entriesListed >= total - tail
        else { return false }
        tailCommitted = true
        return true
    }

    mutating func finishPage(_ work: inout PageWork) -> Action {
        if configuration.dryRun { durableSeq = work.page.throughSeq }  // nothing to apply is applied
        work.next = .sendPageDone
        return .pollCommit
    }

    /// Seals what the session holds into one transaction with the checkpoint of the last page.
    mutating func commitPending(_ work: inout PageWork, wait: Bool) -> Action {
        let checkpoint = work.pending.lastPage.flatMap(checkpointUpdate)
        guard let batch = work.pending.sealed(checkpoint: checkpoint) else {
            return wait ? .waitForCommit : resume(&work)
        }
        work.pending = PendingBatch()
        if sessionKeys != nil { for key in batch.keys { sessionKeys?.insert(key) } }
        committing.append(InFlight(keys: batch.keys, mayRemoveImages: batch.mayRemoveImages))
        return .commit(batch, wait: wait)
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
        guard let target = configuration.checkpoint else { return nil }
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

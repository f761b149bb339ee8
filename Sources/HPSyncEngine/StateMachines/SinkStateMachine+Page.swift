import HPSyncModel
import HPSyncProtocol
import HPSyncStore

// A page arrives: whether the session reconciles and applies, and the local rows its merge
// rule reads.
extension SinkStateMachine {
    mutating func reconciliationLookedUp(_ horizon: VersionStamp?) -> Action {
        reconciling = horizon
        report.reconcileHorizon = horizon.map { Int64($0.milliseconds) }
        return continuing { $0.firstPageDecided(&$1) }
    }

    mutating func liveItemsCounted(_ liveItems: Int) -> Action {
        continuing { machine, work in
            guard let deletionGuard = machine.configuration.deletionGuard else { preconditionFailure("no guard") }
            machine.budget = DeletionBudget(rule: deletionGuard.rule, peer: deletionGuard.peer, liveItems: liveItems)
            if machine.configuration.version >= 2 { machine.budget?.announced = work.page.tombstonesAhead }
            return machine.pageBegins(&work)
        }
    }

    mutating func localRead(_ local: [ItemKey: Item]) -> Action {
        continuing { $0.evaluate(&$1, local: local) }
    }

    mutating func reconciliationPreviewed(_ victims: [ItemKey]) -> Action {
        let keys = victims.map(\.rawValue)
        report.deleted += keys
        report.reconciled += keys
        return continuing { $0.finishPage(&$1) }
    }

    // MARK: - A page, step by step

    mutating func pageArrived(_ page: ManifestPage) -> Action {
        guard case .awaitingPage(let pending) = state else { preconditionFailure("a page arrived with one in hand") }
        let isFirst = pagesStarted == 0
        pagesStarted += 1
        state = .working(PageWork(page: page, isFirst: isFirst, pending: pending))
        guard isFirst else {
            return continuing { machine, work in
                work.step = machine.reconcileStep(for: page, isFirst: false)
                return machine.pageBegins(&work)
            }
        }
        // The first page decides whether this is a reconciliation: it carries the source's
        // horizon (a listing from 0), or one interrupted with this source continues.
        guard let source = configuration.source else { return continuing { $0.firstPageDecided(&$1) } }
        if let horizon = horizon(of: page) { return reconciliationLookedUp(horizon) }
        return .lookUpReconciliation(source: source.store)
    }

    private mutating func firstPageDecided(_ work: inout PageWork) -> Action {
        work.step = reconcileStep(for: work.page, isFirst: true)
        decideWhetherToApply(work.page, reconciling: work.step != nil)
        if configuration.version >= 2 {
            totalEntries = Int(work.page.entriesAhead)
            totalImageBytes = work.page.imageBytesAhead
        }
        if configuration.startsEmpty {
            sessionKeys = SessionKeys(capacity: max(totalEntries ?? 0, work.page.entries.count))
        }
        isBulk = configuration.startsEmpty || (totalEntries ?? 0) >= configuration.bulkCommitEvery
        // The guard's base is counted unless nothing can be deleted: a final first page that
        // lists nothing, outside a reconciliation (the usual pull when nothing changed).
        let canDelete = !(work.page.isFinal && work.page.entries.isEmpty && work.step == nil)
        if configuration.deletionGuard != nil, !configuration.dryRun, canDelete { return .countLiveItems }
        return pageBegins(&work)
    }

    /// Turns the session into a preview unless `applyIf` accepts the source's announcement.
    private mutating func decideWhetherToApply(_ page: ManifestPage, reconciling: Bool) {
        guard let applyIf = configuration.applyIf, !configuration.dryRun else { return }
        if configuration.version >= 2 && !reconciling && applyIf(page.tombstonesAhead) { return }
        configuration.dryRun = true
        configuration.checkpoint = nil
        report.dryRun = true
    }

    private func horizon(of page: ManifestPage) -> VersionStamp? {
        configuration.version >= ProtocolLimits.reconciliationVersion ? page.reconcileHorizon : nil
    }

    private func reconcileStep(for page: ManifestPage, isFirst: Bool) -> ReconcileStep? {
        guard let source = configuration.source, reconciling != nil else { return nil }
        return ReconcileStep(
            source: source.store, sourceNode: source.node, horizon: horizon(of: page), isFirstPage: isFirst,
            listed: page.entries.map(\.key), isFinal: page.isFinal)
    }

    private mutating func pageBegins(_ work: inout PageWork) -> Action {
        holds.startPage()
        report.manifestEntries += work.page.entries.count
        entriesListed += work.page.entries.count
        // A reconciliation's deletions are counted against what earlier pages listed: those
        // must be committed first.
        if budget != nil, work.step?.isFinal == true {
            work.next = .settleKeys
            return commitPending(&work, wait: true)
        }
        return settleKeys(&work)
    }

    /// A key changed twice during the session must meet its first change in the database.
    mutating func settleKeys(_ work: inout PageWork) -> Action {
        let keys = work.page.entries.map(\.key)
        work.next = .readLocal
        if !configuration.dryRun, keys.contains(where: work.pending.keys.contains) {
            return commitPending(&work, wait: true)
        }
        if !configuration.dryRun, let inFlight = committing.first, keys.contains(where: inFlight.keys.contains) {
            return .waitForCommit
        }
        return readLocal(&work)
    }

    /// Reads the local rows of the page's keys; in a store that began empty, only of those this
    /// session may have committed (none, on a first pull's pages, unless the source lists a key
    /// again): the others have no row to merge with.
    mutating func readLocal(_ work: inout PageWork) -> Action {
        let keys = work.page.entries.map(\.key)
        let applyingNext = !isBulk && committing.isEmpty
        guard let sessionKeys else { return .readLocal(keys, applyingNext: applyingNext) }
        let committed = keys.filter(sessionKeys.mayContain)
        guard committed.isEmpty else { return .readLocal(committed, applyingNext: applyingNext) }
        return evaluate(&work, local: [:])
    }

    /// One read of the page's local rows serves the merge rule and the image decisions.
    mutating func evaluate(_ work: inout PageWork, local: [ItemKey: Item]) -> Action {
        let page = work.page
        work.local = local
        let (acceptable, refusals) = holds.screen(page)
        for entry in acceptable where entry.version.stamp > work.pending.newestRemoteStamp {
            work.pending.newestRemoteStamp = entry.version.stamp
        }
        let plan = MergePlanner.plan(
            ManifestPage(entries: acceptable, throughSeq: page.throughSeq, isFinal: page.isFinal), local: local)
        report.refused += refusals.map { SyncReport.Refusal(key: $0.key.rawValue, reason: $0.reason) }
        report.skipped += plan.skipped
        if configuration.dryRun {
            report.inserted += plan.inserted.map(\.rawValue)
            report.updated += plan.updated.map(\.rawValue)
            report.deleted += plan.deleted.map(\.rawValue)
            report.tombstonesRecorded += plan.tombstonesRecorded.count
            if let step = work.step {
                return .previewReconciliation(step, horizon: step.isFinal ? reconciling : nil)
            }
            return finishPage(&work)
        }
        work.incoming = plan.tombstones.map { IncomingRecord(item: $0, image: nil) }
        work.deletions = plan.deleted.count
        guard !plan.fetch.isEmpty else { return admitDeletions(&work) }
        work.fetching = true
        work.recordRequests = plan.fetch.chunked(ProtocolLimits.recordBatchSize)
        return requestRecords(&work)
    }
}

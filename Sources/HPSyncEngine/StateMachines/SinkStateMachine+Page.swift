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
            guard let rule = machine.deletionGuard else { preconditionFailure("no guard") }
            machine.budget = DeletionBudget(rule: rule, peer: machine.configuration.peer, liveItems: liveItems)
            if machine.configuration.version >= 2 { machine.budget?.announced = work.page.tombstonesAhead }
            return machine.pageBegins(&work)
        }
    }

    /// The answer to `.decideWhetherToApply`: when the source's announcement does not let the
    /// session apply, it only previews.
    mutating func applyDecided(_ applies: Bool) -> Action {
        if !applies { beginPreview() }
        return continuing { $0.firstPageSettled(&$1) }
    }

    mutating func localRead(_ local: [ItemKey: Item]) -> Action {
        continuing { machine, work in
            work.local = local
            return machine.checkEntryClocks(&work)
        }
    }

    /// The answer to `.checkClocks`: the page's entries, or the records that win.
    mutating func clocksChecked(_ refusals: [ClockRefusal]) -> Action {
        continuing { machine, work in
            switch work.checkingClocks {
            case .entries: return machine.evaluate(&work, refusals: refusals)
            case .records: return machine.judgeRecords(&work, refusals: refusals)
            }
        }
    }

    mutating func reconciliationPreviewed(_ victims: [ItemKey]) -> Action {
        let keys = victims.map(\.rawValue)
        report.deleted += keys
        report.reconciled += keys
        return continuing { $0.finishPage(&$1) }
    }

    // MARK: - A page, step by step

    mutating func pageArrived(_ page: ManifestPage) -> Action {
        let isFirst = pagesStarted == 0
        pagesStarted += 1
        startWork(on: page, isFirst: isFirst)
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
        guard configuration.asksBeforeApplying, !isPreview else { return firstPageSettled(&work) }
        // The source can tell how many tombstones it will list only from version 2, and a
        // reconciliation's deletions are not tombstones: those sessions only preview.
        guard configuration.version >= 2, work.step == nil else {
            beginPreview()
            return firstPageSettled(&work)
        }
        return .decideWhetherToApply(tombstonesAhead: work.page.tombstonesAhead)
    }

    private mutating func firstPageSettled(_ work: inout PageWork) -> Action {
        if configuration.version >= 2 { totalImageBytes = work.page.imageBytesAhead }
        let announced = configuration.version >= 2 ? Int(work.page.entriesAhead) : nil
        batches.start(startsEmpty: configuration.startsEmpty, announcedEntries: announced)
        if configuration.startsEmpty {
            sessionKeys = SessionKeys(capacity: max(announced ?? 0, work.page.entries.count))
        }
        // The guard's base is counted unless nothing can be deleted: a final first page that
        // lists nothing, outside a reconciliation (the usual pull when nothing changed).
        let canDelete = !(work.page.isFinal && work.page.entries.isEmpty && work.step == nil)
        if deletionGuard != nil, !isPreview, canDelete { return .countLiveItems }
        return pageBegins(&work)
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
        if !isPreview, keys.contains(where: work.pending.keys.contains) {
            return commitPending(&work, wait: true)
        }
        if !isPreview, let inFlight = committing.first, keys.contains(where: inFlight.keys.contains) {
            return .commit(.wait)
        }
        return readLocal(&work)
    }

    /// Reads the local rows of the page's keys; in a store that began empty, only of those this
    /// session may have committed (none, on a first pull's pages, unless the source lists a key
    /// again): the others have no row to merge with.
    mutating func readLocal(_ work: inout PageWork) -> Action {
        let keys = work.page.entries.map(\.key)
        let applyingNext = !batches.isBulk && committing.isEmpty
        guard let sessionKeys else { return .readLocal(keys, applyingNext: applyingNext) }
        let committed = keys.filter(sessionKeys.mayContain)
        guard committed.isEmpty else { return .readLocal(committed, applyingNext: applyingNext) }
        return checkEntryClocks(&work)
    }

    /// Asks the clock guard about the page's entries (none for an empty page).
    private mutating func checkEntryClocks(_ work: inout PageWork) -> Action {
        guard !work.page.entries.isEmpty else { return evaluate(&work, refusals: []) }
        work.checkingClocks = .entries
        return .checkClocks(work.page.entries.map(\.version))
    }

    /// One read of the page's local rows serves the merge rule and the image decisions.
    private mutating func evaluate(_ work: inout PageWork, refusals: [ClockRefusal]) -> Action {
        let page = work.page
        let local = work.local
        let (acceptable, refusals) = holds.screen(page, refusals: refusals)
        for entry in acceptable where entry.version.stamp > work.pending.newestRemoteStamp {
            work.pending.newestRemoteStamp = entry.version.stamp
        }
        for entry in acceptable {
            guard let mine = local[entry.key], entry.version < mine.version else { continue }
            let stamp = entry.version.stamp
            let declined = work.pending.declinedStamps
            work.pending.declinedStamps =
                min(declined?.lowerBound ?? stamp, stamp)...max(declined?.upperBound ?? stamp, stamp)
        }
        let plan = MergePlanner.plan(
            ManifestPage(entries: acceptable, throughSeq: page.throughSeq, isFinal: page.isFinal), local: local,
            mergesFields: mergesFields)
        report.refused += refusals.map { SyncReport.Refusal(key: $0.key.rawValue, reason: $0.reason) }
        report.skipped += plan.skipped
        if isPreview {
            report.inserted += plan.inserted.map(\.rawValue)
            report.updated += plan.updated.map(\.rawValue)
            report.deleted += plan.deleted.map(\.rawValue)
            report.tombstonesRecorded += plan.tombstonesRecorded.count
            return previewRecords(plan.fetch, &work)
        }
        work.incoming = plan.tombstones.map { incomingRecord($0, nil) }
        // Tombstones that are fetched (version 5: they keep fields) count when their records
        // arrive, like any record that turns out deleted.
        work.deletions = plan.tombstones.filter { local[$0.key].map { !$0.deleted } ?? false }.count
        guard !plan.fetch.isEmpty else { return admitDeletions(&work) }
        work.fetching = true
        work.recordRequests = plan.fetch.chunked(ProtocolLimits.recordBatchSize)
        return requestRecords(&work)
    }
}

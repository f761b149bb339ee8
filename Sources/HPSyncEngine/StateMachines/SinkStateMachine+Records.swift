import HPSyncModel

// The page's records, fetched and checked, and its deletions against the mass-deletion guard.
extension SinkStateMachine {
    mutating func requestRecords(_ work: inout PageWork) -> Action {
        let keys = Array(work.recordRequests.removeFirst())
        frames.requestedRecords(keys)
        return .fetchRecords(keys)
    }

    mutating func recordsArrived(_ items: [Item], _ work: inout PageWork) -> Action {
        work.records += items
        guard work.recordRequests.isEmpty else { return requestRecords(&work) }
        report.recordsTransferred += work.records.count
        if isPreview { return previewImages(&work) }
        // The records that win the merge rule wait in `winners` for the clock guard: a record
        // can be newer than its manifest entry, so its own stamp must pass the guard too.
        work.winners = work.records.filter {
            MergePlanner.wins($0, over: work.local[$0.key], mergesFields: mergesFields)
        }
        guard !work.winners.isEmpty else { return judgeRecords(&work, refusals: []) }
        work.checkingClocks = .records
        return .checkClocks(work.winners.map(\.version))
    }

    /// Keeps the winners the clock guard accepts; the others are withheld.
    mutating func judgeRecords(_ work: inout PageWork, refusals: [ClockRefusal]) -> Action {
        let candidates = work.winners
        work.winners = []
        var refused = refusals.makeIterator()
        var nextRefused = refused.next()
        for (index, record) in candidates.enumerated() {
            if let refusal = nextRefused, refusal.index == index {
                nextRefused = refused.next()
                holds.refused(record, because: refusal.reason)
                report.refused.append(SyncReport.Refusal(key: record.key.rawValue, reason: refusal.reason))
                work.withheld.append(record.key)
            } else {
                work.winners.append(record)
                // The item was deleted at the source after its manifest entry was read.
                if record.deleted, let mine = work.local[record.key], !mine.deleted { work.deletions += 1 }
            }
        }
        report.skipped += work.records.count - work.winners.count - work.withheld.count
        return admitDeletions(&work)
    }

    mutating func victimsCounted(_ victims: Int) -> Action {
        continuing { $0.admit($1.deletions + victims, &$1) }
    }

    /// Lets the mass-deletion guard judge this page's deletions before anything of it is
    /// applied. The final page of a reconciliation also deletes live items no page listed,
    /// stamped before the horizon: the store counts those first.
    mutating func admitDeletions(_ work: inout PageWork) -> Action {
        guard budget != nil else { return admitted(&work) }
        if let step = work.step, step.isFinal, let reconciling {
            return .countReconciliationVictims(step, horizon: reconciling)
        }
        return admit(work.deletions, &work)
    }

    /// When the deletions would trip the guard, commits what the session holds from earlier
    /// pages (all within the limit) and stops.
    private mutating func admit(_ deletions: Int, _ work: inout PageWork) -> Action {
        do {
            try budget?.admit(deletions)
        } catch {
            work.next = .fail(error)
            return commitPending(&work, wait: true)
        }
        return admitted(&work)
    }

    private mutating func admitted(_ work: inout PageWork) -> Action {
        guard work.fetching else { return holdPage(&work) }
        // Files the batch in flight may unlink are no source for a copy until it is committed.
        noteTombstonePhotos(&work)
        let withImages = work.winners.contains { work.photo(of: $0) != nil }
        if withImages, committing.contains(where: \.mayRemoveImages) {
            work.next = .planImages
            return .commit(.wait)
        }
        return planImages(&work)
    }
}

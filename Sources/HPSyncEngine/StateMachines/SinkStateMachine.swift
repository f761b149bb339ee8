import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The receiving side of a transfer, as a state machine that does no I/O.
///
/// Each input (a frame arrived, the store answered a question, a batch committed) returns the
/// action the session performs next: receive a frame, read something from the store, fetch
/// records or images, commit the pending batch (and wait or not), send PageDone, fail. The
/// session is a loop that performs actions and feeds their results back (`SinkSession`).
///
/// The machine evaluates each manifest page by the merge rule, decides which records and
/// images to fetch, checks what arrives against what was asked (`SinkFrameOrder`), keeps the
/// checkpoint before anything it does not apply (`SinkHolds`), counts deletions against the
/// mass-deletion guard (`DeletionBudget`), and gathers what it will commit in one
/// `PendingBatch`: one page (version 1) or pages up to `Batch`'s limits (version 2).
struct SinkStateMachine {
    /// When a version-2 sink commits what it holds: at the final page, or once the pages it
    /// holds list this many entries or their images this many bytes, whichever comes first.
    enum Batch {
        static let entries = 10_000
        static let imageBytes: Int64 = 64 << 20
    }

    struct Configuration {
        var dryRun = false
        /// Where the checkpoint lives: set for a pulling client, nil for a server receiving a push.
        var checkpoint: (store: StoreID, direction: SyncDirection)?
        /// The source's store and node, which a full reconciliation needs; nil for none.
        var source: (store: StoreID, node: NodeID)?
        /// The session's protocol version. From 2 on, `reconcile_horizon` means something,
        /// PageDone asks for the next page at once and pages are committed in batches.
        var version = ProtocolLimits.maxVersion
        /// When set, decides on the first page whether the session applies; when it says no (or
        /// the source cannot tell: version 1, or a reconciliation, whose deletions are not
        /// tombstones), the session only previews, like `dryRun`.
        var applyIf: SyncClient.ApplyDecision?
        /// Version 2: commit once the pages held list this many entries.
        var commitEvery = Batch.entries
        /// When set, the session counts the deletions it really receives and stops before the
        /// page that would make them trip this guard (whatever the source announced).
        var deletionGuard: (rule: MassDeleteGuard, peer: String)?
        /// The largest image the store accepts.
        var maxImageBytes = Int64.max
        /// Why the clock guard refuses a version, worded for the user; nil when it may be applied.
        var clockGuard: (Version) -> String? = { _ in nil }
    }

    /// What the session does next.
    enum Action {
        /// Receive the next frame and feed it to `received(_:)`.
        case receive
        /// Feed `reconciliationLookedUp(_:)` the horizon of the reconciliation in progress with
        /// `source`, if any.
        case lookUpReconciliation(source: StoreID)
        /// Feed `liveItemsCounted(_:)` the number of live items.
        case countLiveItems
        /// Hand the batch (if any) to the committer; with `wait`, wait until it and every batch
        /// before it are committed. Feed each commit that ends to `batchCommitted(_:)`, then
        /// call `proceed()`.
        case commit(PendingBatch.Sealed?, wait: Bool)
        /// Wait for the batch in flight (`batchCommitted(_:)`), then `proceed()`.
        case waitForCommit
        /// Take the result of the batch in flight if it has ended (`batchCommitted(_:)`), then
        /// `proceed()`.
        case pollCommit
        /// Feed `localRead(_:)` this store's rows of these keys (tombstones included).
        case readLocal([ItemKey])
        /// A preview's reconciliation: list the step's keys aside; with a horizon (its final
        /// page), feed `reconciliationPreviewed(_:)` the live items it would delete, else [].
        case previewReconciliation(ReconcileStep, horizon: VersionStamp?)
        /// Send FetchRecords, then `.receive`.
        case fetchRecords([ItemKey])
        /// Feed `victimsCounted(_:)` how many live items the final step of the reconciliation
        /// at `horizon` deletes.
        case countReconciliationVictims(ReconcileStep, horizon: VersionStamp)
        /// Feed `imagesLocated(_:)` the files this store holds with these digests.
        case locateImages([SHA256Digest])
        /// Send FetchImages, then `.receive`.
        case fetchImages([ImageWanted])
        /// Start a staging file for the image this header announces, then `.receive`.
        case stageImage(ImageHeaderMessage)
        /// Write the chunk to the staging file; with a key, the image is complete: finish it
        /// (verified as sent for that key) and feed `imageArrived(_:)`; else `.receive`.
        case writeChunk([UInt8], finishing: ItemKey?)
        /// Stage copies of these local files, feed `copiesStaged(_:)`.
        case stageCopies([LocalCopy])
        /// Send this PageDone, then call `pageDoneSent()`.
        case sendPageDone(Message)
        /// Stop: the session fails with this error.
        case fail(any Error)
        /// The final page is applied (or previewed).
        case finished
    }

    /// An image this store already holds under another item: copied, no bytes move.
    struct LocalCopy {
        var key: ItemKey
        var file: URL
        var image: ImageRef
    }

    enum State {
        /// Between pages; what the session holds for the next commit.
        case awaitingPage(PendingBatch)
        case working(PageWork)
        case finished
        /// Only while an input changes the page in hand (keeps it uniquely referenced).
        case modifying
    }

    /// One page in hand, from its arrival to its PageDone.
    struct PageWork {
        var page: ManifestPage
        var isFirst: Bool
        var pending: PendingBatch
        /// The page's part in a full reconciliation, or nil.
        var step: ReconcileStep?
        /// Where `proceed()` continues after a commit or wait.
        var next = Resume.readLocal
        /// This store's rows of the page's keys.
        var local: [ItemKey: Item] = [:]
        /// Checked and to be applied: winning tombstones, then records with their images.
        var incoming: [IncomingRecord] = []
        /// Deletions this page brings, for the guard.
        var deletions = 0
        /// Whether the page has records to fetch; record requests still to send.
        var fetching = false
        var recordRequests: [ArraySlice<ItemKey>] = []
        var records: [Item] = []
        /// Records that win the merge rule and pass the clock guard.
        var winners: [Item] = []
        /// Records not applied: refused by the clock guard, or without their image.
        var withheld: [ItemKey] = []
        var images: [ItemKey: ImageSource] = [:]
        /// Winning records whose image may be a file of this store under another key.
        var lookingUp: [Item] = []
        var imageRequests: [ArraySlice<ImageWanted>] = []
        /// The image being received.
        var header: ImageHeaderMessage?
        var fetched: [SHA256Digest: StagedImage] = [:]
    }

    enum Resume {
        case settleKeys
        case readLocal
        case planImages
        case finishPage
        case sendPageDone
        case fail(any Error)
    }

    enum ImageSource {
        case alreadyHere
        /// Bytes an earlier page of this batch already fetched.
        case staged(StagedImage)
        case localCopy(URL)
        case fetched
    }

    /// What a batch in flight may touch, until its commit is reported.
    private struct InFlight {
        var keys: Set<ItemKey>
        var mayRemoveImages: Bool
    }

    private(set) var state = State.awaitingPage(PendingBatch())
    private var configuration: Configuration
    private var frames = SinkFrameOrder()
    /// What the session did not apply: no checkpoint passes it, so a later run retries it.
    private var holds: SinkHolds
    /// The mass-deletion guard's running count, when the session applies under one.
    private(set) var budget: DeletionBudget?
    /// The horizon of the reconciliation this session takes part in (decided on its first page).
    private var reconciling: VersionStamp?
    private var committing: [InFlight] = []
    private var pagesStarted = 0
    /// How far the store has durably applied the source's feed: PageDone's `durable_seq`.
    private(set) var durableSeq: Int64 = 0
    /// What the session did, committed or previewed.
    private(set) var report: SyncReport
    /// Items inserted, updated or deleted by what was received and checked so far, committed
    /// or not: what the progress line shows while a batch gathers (the summary counts commits).
    private(set) var receivedItems = 0
    /// What the source's first page announced (version 2), for the progress estimate.
    private(set) var totalEntries: Int?
    private(set) var totalImageBytes: Int64?

    init(_ configuration: Configuration = .init(), report: SyncReport = SyncReport(direction: .pull, peer: "")) {
        self.configuration = configuration
        self.holds = SinkHolds(refusal: configuration.clockGuard)
        self.report = report
    }

    var isPreview: Bool { configuration.dryRun }

    /// What the machine waits for, for error messages.
    var expectation: String { frames.expectation }

    /// The staged temporaries of the batch not yet handed to the committer.
    var heldTemporaries: [StagedImage] {
        switch state {
        case .awaitingPage(let pending): return pending.staged
        case .working(let work): return work.pending.staged
        case .finished, .modifying: return []
        }
    }

    // MARK: - Inputs

    /// A frame arrived. Throws when the conversation does not allow it here.
    mutating func received(_ frame: IncomingFrame) throws(ProtocolError) -> Action {
        switch try frames.received(frame) {
        case .peerError(let error):
            return .fail(SyncError.refusedByPeer(error))
        case .page(let page):
            return pageArrived(page)
        case .records(let items):
            return continuing { $0.recordsArrived(items, &$1) }
        case .imageStarted(let header):
            guard header.size <= configuration.maxImageBytes else {
                return .fail(
                    SyncError.imageTooLarge(
                        key: header.key.rawValue, size: header.size, limit: configuration.maxImageBytes))
            }
            return continuing { _, work in
                work.header = header
                return .stageImage(header)
            }
        case .imageChunk(let bytes):
            guard frames.imageComplete else { return .writeChunk(bytes, finishing: nil) }
            guard case .working(let work) = state, let header = work.header else {
                preconditionFailure("a chunk arrived with no image announced")
            }
            return .writeChunk(bytes, finishing: header.key)
        case .imageFinished(let finished):
            guard finished.missing else {
                throw ProtocolError.invalidField(
                    message: "ImageHeader", field: "size", problem: "is 0 for an image that is not missing")
            }
            return imageArrived(nil)
        }
    }

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

    /// The commit or wait asked for is done: continues the page.
    mutating func proceed() -> Action {
        continuing { $0.resume(&$1) }
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

    mutating func victimsCounted(_ victims: Int) -> Action {
        continuing { $0.admit($1.deletions + victims, &$1) }
    }

    mutating func imagesLocated(_ files: [SHA256Digest: URL]) -> Action {
        continuing { $0.imagesLocated(files, &$1) }
    }

    /// An image requested arrived and was verified; nil when the source says it is missing.
    mutating func imageArrived(_ image: StagedImage?) -> Action {
        continuing { machine, work in
            if let image, let header = work.header {
                work.pending.staged.append(image)
                work.fetched[header.digest] = image
                work.pending.images[header.digest] = image
                machine.report.imagesTransferred += 1
                machine.report.imageBytes += header.size
            }
            work.header = nil
            guard machine.frames.isIdleWithPage else { return .receive }
            return machine.requestImages(&work)
        }
    }

    mutating func copiesStaged(_ copies: [ItemKey: StagedImage]) -> Action {
        continuing { $0.assemble(&$1, copies: copies) }
    }

    /// A batch ended committed: counts it and moves the durable point past it.
    mutating func batchCommitted(_ committed: BatchCommitter.Committed) {
        if !committing.isEmpty { committing.removeFirst() }
        let outcome = committed.outcome
        durableSeq = committed.throughSeq
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

    /// Records that FetchImages went out for these images, in this order.
    mutating func requestedImages(_ images: [ImageWanted]) { frames.requestedImages(images) }

    /// Records that the page's PageDone went out; true when it was the last.
    mutating func pageApplied() -> Bool { frames.pageApplied() }

    // MARK: - A page, step by step

    private mutating func pageArrived(_ page: ManifestPage) -> Action {
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
        if configuration.deletionGuard != nil, !configuration.dryRun { return .countLiveItems }
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
        // A reconciliation's deletions are counted against what earlier pages listed: those
        // must be committed first.
        if budget != nil, work.step?.isFinal == true {
            work.next = .settleKeys
            return commitPending(&work, wait: true)
        }
        return settleKeys(&work)
    }

    /// A key changed twice during the session must meet its first change in the database.
    private mutating func settleKeys(_ work: inout PageWork) -> Action {
        let keys = work.page.entries.map(\.key)
        work.next = .readLocal
        if !configuration.dryRun, keys.contains(where: work.pending.keys.contains) {
            return commitPending(&work, wait: true)
        }
        if !configuration.dryRun, let inFlight = committing.first, keys.contains(where: inFlight.keys.contains) {
            return .waitForCommit
        }
        return .readLocal(keys)
    }

    /// One read of the page's local rows serves the merge rule and the image decisions.
    private mutating func evaluate(_ work: inout PageWork, local: [ItemKey: Item]) -> Action {
        let page = work.page
        work.local = local
        let (acceptable, refusals) = holds.screen(page)
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

    private mutating func requestRecords(_ work: inout PageWork) -> Action {
        let keys = Array(work.recordRequests.removeFirst())
        frames.requestedRecords(keys)
        return .fetchRecords(keys)
    }

    private mutating func recordsArrived(_ items: [Item], _ work: inout PageWork) -> Action {
        work.records += items
        guard work.recordRequests.isEmpty else { return requestRecords(&work) }
        report.recordsTransferred += work.records.count
        for record in work.records where MergePlanner.wins(record.version, over: work.local[record.key]) {
            // A record can be newer than its manifest entry: its own stamp passes the guard too.
            if let reason = holds.refuses(record) {
                report.refused.append(SyncReport.Refusal(key: record.key.rawValue, reason: reason))
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

    /// Lets the mass-deletion guard judge this page's deletions before anything of it is
    /// applied. The final page of a reconciliation also deletes live items no page listed,
    /// stamped before the horizon: the store counts those first.
    private mutating func admitDeletions(_ work: inout PageWork) -> Action {
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
        let withImages = work.winners.contains { !$0.deleted && $0.image != nil }
        if withImages, committing.contains(where: \.mayRemoveImages) {
            work.next = .planImages
            return .waitForCommit
        }
        return planImages(&work)
    }

    /// Decides where each winning record's image comes from: nothing when this key already has
    /// that image, bytes an earlier page of the batch fetched, a local copy when another item
    /// has the same bytes (no bytes move), else bytes fetched from the source once per digest.
    private mutating func planImages(_ work: inout PageWork) -> Action {
        var lookUp: [SHA256Digest] = []
        for item in work.winners where !item.deleted {
            guard let image = item.image else { continue }
            guard image.size <= configuration.maxImageBytes else {
                return .fail(
                    SyncError.imageTooLarge(
                        key: item.key.rawValue, size: image.size, limit: configuration.maxImageBytes))
            }
            if let mine = work.local[item.key], !mine.deleted, mine.image == image {
                work.images[item.key] = .alreadyHere
            } else if let held = work.pending.images[image.digest] {
                work.images[item.key] = .staged(held)
            } else {
                work.lookingUp.append(item)
                lookUp.append(image.digest)
            }
        }
        guard !lookUp.isEmpty else { return imagesLocated([:], &work) }
        return .locateImages(lookUp)
    }

    private mutating func imagesLocated(_ files: [SHA256Digest: URL], _ work: inout PageWork) -> Action {
        var wanted: [ImageWanted] = []
        var fetchedDigests = Set<SHA256Digest>()
        for item in work.lookingUp {
            guard let digest = item.image?.digest else { continue }
            if let file = files[digest] {
                work.images[item.key] = .localCopy(file)
            } else {
                work.images[item.key] = .fetched
                if fetchedDigests.insert(digest).inserted { wanted.append(ImageWanted(key: item.key, digest: digest)) }
            }
        }
        work.imageRequests = wanted.chunked(ProtocolLimits.imagesPerRequest)
        return requestImages(&work)
    }

    private mutating func requestImages(_ work: inout PageWork) -> Action {
        guard work.imageRequests.isEmpty else {
            let group = Array(work.imageRequests.removeFirst())
            frames.requestedImages(group)
            return .fetchImages(group)
        }
        var copies: [LocalCopy] = []
        for item in work.winners {
            guard case .localCopy(let file) = work.images[item.key], let image = item.image else { continue }
            copies.append(LocalCopy(key: item.key, file: file, image: image))
        }
        guard !copies.isEmpty else { return assemble(&work, copies: [:]) }
        return .stageCopies(copies)
    }

    /// Gives each winning record the image it names.
    private mutating func assemble(_ work: inout PageWork, copies: [ItemKey: StagedImage]) -> Action {
        for item in work.winners {
            guard !item.deleted, let image = item.image, let source = work.images[item.key] else {
                work.incoming.append(IncomingRecord(item: item, image: nil))
                continue
            }
            switch source {
            case .alreadyHere:
                work.incoming.append(IncomingRecord(item: item, image: nil))
            case .staged(let held):
                work.incoming.append(IncomingRecord(item: item, image: held))
            case .localCopy:
                guard let copy = copies[item.key] else { preconditionFailure("a local copy was not staged") }
                work.pending.staged.append(copy)
                work.incoming.append(IncomingRecord(item: item, image: copy))
            case .fetched:
                if let staged = work.fetched[image.digest] {
                    work.incoming.append(IncomingRecord(item: item, image: staged))
                } else {
                    // The source no longer has these bytes (changed meanwhile, or lost). The
                    // record is not applied without its image, and the checkpoint stays before
                    // it so that a later pull tries again.
                    report.skipped += 1
                    work.withheld.append(item.key)
                    report.withheld.append(
                        SyncReport.Refusal(
                            key: item.key.rawValue,
                            reason: "its image (SHA-256 \(image.digest)) is missing on the source; it is applied "
                                + "once the source has the file again (`hp-sync verify --repair` there)"))
                }
            }
        }
        return holdPage(&work)
    }

    /// Adds the page to the pending batch, and commits it when the batch is full, the page is
    /// final, or the version commits each page.
    private mutating func holdPage(_ work: inout PageWork) -> Action {
        let page = work.page
        holds.hold(before: work.withheld, in: page)
        receivedItems += work.pending.add(work.incoming, local: work.local)
        work.pending.entries += page.entries.count
        if let step = work.step { work.pending.add(step) }
        work.pending.lastPage = page
        let version = configuration.version
        guard
            version < 2 || page.isFinal || work.pending.entries >= configuration.commitEvery
                || work.pending.imageBytes >= Batch.imageBytes
        else { return finishPage(&work) }
        // Version 1 acknowledges each page as applied; the final page needs everything durable;
        // a reconciliation keeps to one step at a time.
        work.next = .finishPage
        return commitPending(&work, wait: version < 2 || page.isFinal || reconciling != nil)
    }

    private mutating func finishPage(_ work: inout PageWork) -> Action {
        if configuration.dryRun { durableSeq = work.page.throughSeq }  // nothing to apply is applied
        work.next = .sendPageDone
        return .pollCommit
    }

    /// Seals what the session holds into one transaction with the checkpoint of the last page.
    private mutating func commitPending(_ work: inout PageWork, wait: Bool) -> Action {
        let checkpoint = work.pending.lastPage.flatMap(checkpointUpdate)
        guard let batch = work.pending.sealed(checkpoint: checkpoint) else {
            return wait ? .waitForCommit : resume(&work)
        }
        work.pending = PendingBatch()
        committing.append(InFlight(keys: batch.keys, mayRemoveImages: batch.mayRemoveImages))
        return .commit(batch, wait: wait)
    }

    private mutating func resume(_ work: inout PageWork) -> Action {
        switch work.next {
        case .settleKeys: return settleKeys(&work)
        case .readLocal: return .readLocal(work.page.entries.map(\.key))
        case .planImages: return planImages(&work)
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

    /// Runs `step` on the page in hand, which it may change in place.
    private mutating func continuing(_ step: (inout Self, inout PageWork) -> Action) -> Action {
        guard case .working(var work) = state else { preconditionFailure("no page in hand") }
        state = .modifying
        let action = step(&self, &work)
        if case .modifying = state { state = .working(work) }
        return action
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

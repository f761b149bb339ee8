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
/// `PendingBatch`: one page (version 1) or pages as `BatchPolicy` says (version 2).
struct SinkStateMachine {
    /// What the session is: the plan its caller made, and what the Hellos and the store said
    /// before the first page. Read, never changed: what the session learns as it runs (that it
    /// only previews, that it is a bulk pull) is the machine's state.
    struct Configuration {
        /// The pull (or, on a server, the push it receives) as its caller made it.
        var plan = SyncPlan()
        /// Where the checkpoint lives: set for a pulling client, nil for a server receiving a push.
        var checkpoint: (store: StoreID, direction: SyncDirection)?
        /// The source's store and node, which a full reconciliation needs; nil for none.
        var source: (store: StoreID, node: NodeID)?
        /// The session's protocol version. From 2 on, `reconcile_horizon` means something,
        /// PageDone asks for the next page at once and pages are committed in batches.
        var version = ProtocolLimits.maxVersion
        /// The first session of a guarded pull: on the first page the session is asked
        /// (`.decideWhetherToApply`) whether the source's announced tombstones let it apply;
        /// when not (or the source cannot tell: version 1, or a reconciliation, whose deletions
        /// are not tombstones), the session only previews, like a dry run.
        var asksBeforeApplying = false
        /// The peer as the mass-deletion guard names it.
        var peer = ""
        /// The largest image the store accepts.
        var maxImageBytes = Int64.max
        /// The store had no item rows and no GC horizon when the session began: a key has a row
        /// only if this session committed it (`SessionKeys`), so the merge rule reads no other.
        var startsEmpty = false
    }

    /// What the session does next. Most inputs return one: a frame or an answer from the store
    /// can carry the page through several steps (records, the clock guard, images, the commit)
    /// before the machine needs the session again. Two inputs answer with types of their own:
    /// `proceed()` follows a `Commit`, and `pageDoneSent()` returns a `PageDoneSentAction`.
    enum Action {
        /// Receive the next frame and feed it to `received(_:)`.
        case receive
        /// Feed `reconciliationLookedUp(_:)` the horizon of the reconciliation in progress with
        /// `source`, if any.
        case lookUpReconciliation(source: StoreID)
        /// Feed `liveItemsCounted(_:)` the number of live items.
        case countLiveItems
        /// Feed `applyDecided(_:)` whether the plan's mass-deletion guard lets this many
        /// tombstones, announced by the source, be applied (`Configuration.asksBeforeApplying`).
        case decideWhetherToApply(tombstonesAhead: Int64)
        /// Feed `clocksChecked(_:)` the versions the clock guard refuses, by index, with why.
        case checkClocks([Version])
        /// Hand a batch to the committer, or wait for one; feed each commit that ends to
        /// `batchCommitted(_:)`, then call `proceed()`.
        case commit(Commit)
        /// Feed `localRead(_:)` this store's rows of these keys (tombstones included). With
        /// `applyingNext`, no batch is in flight and the session is not a bulk pull: the rows'
        /// apply comes next, and the store may read them where that apply will find them
        /// (`Store.mergeBases(_:applyingNext:)`). A bulk pull's batches gather many pages, and
        /// the writer's small cache between them is what bounds its memory.
        case readLocal([ItemKey], applyingNext: Bool)
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
    }

    /// What the session does with the committer before it calls `proceed()`.
    enum Commit {
        /// Hand the batch (if any) to the committer; with `wait`, wait until it and every batch
        /// before it are committed.
        case submit(PendingBatch.Sealed?, wait: Bool)
        /// Wait for the batch in flight.
        case wait
        /// Take the result of the batch in flight if it has ended.
        case poll
    }

    /// What follows a PageDone (`pageDoneSent()`).
    enum PageDoneSentAction: Equatable {
        /// Receive the next page and feed it to `received(_:)`.
        case receive
        /// The final page is applied (or previewed): the session ends.
        case finished
    }

    /// An image this store already holds under another item: copied, no bytes move.
    struct LocalCopy {
        var key: ItemKey
        var file: URL
        var image: ImageRef
    }

    /// A version the clock guard refuses: its index in `.checkClocks`, and why, for the user.
    struct ClockRefusal: Equatable {
        var index: Int
        var reason: String
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
        /// What the clock guard is checking: the page's entries, or the records that win.
        var checkingClocks = ClockCheck.entries
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
        /// Winning tombstones whose join shows or keeps a photo this store may lack
        /// (`tombstonePhoto`): the bytes are fetched like a record's own image.
        var tombstonePhotos: [ItemKey: ImageRef] = [:]
        /// Winning records whose image may be a file of this store under another key.
        var lookingUp: [Item] = []
        var imageRequests: [ArraySlice<ImageWanted>] = []
        /// The image being received.
        var header: ImageHeaderMessage?
        var fetched: [SHA256Digest: StagedImage] = [:]
    }

    enum ClockCheck {
        case entries
        case records
    }

    enum Resume {
        case settleKeys
        case readLocal
        case planImages
        case requestImages
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
    struct InFlight {
        var keys: Set<ItemKey>
        var mayRemoveImages: Bool
    }

    private var state = State.awaitingPage(PendingBatch())
    let configuration: Configuration
    /// The plan's mass-deletion guard, unless the session only previews.
    let deletionGuard: MassDeleteGuard?
    /// A monotonic clock in milliseconds: the session's, a test's own.
    let uptime: () -> UInt64
    /// Whether the session only previews: the plan's dry run, or a guarded pull's first session
    /// that the source's announcement did not let apply (`decideWhetherToApply`).
    private(set) var isPreview: Bool
    var frames = SinkFrameOrder()
    /// What the session did not apply: no checkpoint passes it, so a later run retries it.
    var holds = SinkHolds()
    /// The mass-deletion guard's running count, when the session applies under one.
    var budget: DeletionBudget?
    /// The horizon of the reconciliation this session takes part in (decided on its first page).
    var reconciling: VersionStamp?
    var committing: [InFlight] = []
    /// When the store began empty: the keys this session handed to the committer.
    var sessionKeys: SessionKeys?
    var pagesStarted = 0
    /// When the pages held are committed (version 2): learns on the first page whether the pull
    /// is bulk, and grows its limit as batches fill.
    var batches: BatchPolicy
    /// The entries the session's pages listed so far.
    var entriesListed = 0
    /// How far the store has durably applied the source's feed: PageDone's `durable_seq`.
    var durableSeq: Int64 = 0
    /// What the session did, committed or previewed.
    var report: SyncReport
    /// Items inserted, updated or deleted by what was received and checked so far, committed
    /// or not: what the progress line shows while a batch gathers (the summary counts commits).
    var receivedItems = 0
    /// What the source's first page announced (version 2), for the progress estimate.
    var totalImageBytes: Int64?
    /// The images a preview counted as fetched: a later page naming one would find it here.
    var previewedDigests = Set<SHA256Digest>()

    /// `batches` defaults to the plan's batch size; a test passes its own limits and clock.
    init(
        _ configuration: Configuration = .init(), batches: BatchPolicy? = nil,
        uptime: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds / 1_000_000 },
        report: SyncReport = SyncReport(direction: .pull, peer: "")
    ) {
        self.configuration = configuration
        self.deletionGuard = configuration.plan.dryRun ? nil : configuration.plan.massDeleteGuard
        self.isPreview = configuration.plan.dryRun
        self.batches = batches ?? BatchPolicy(commitEvery: configuration.plan.commitEvery)
        self.uptime = uptime
        self.report = report
    }

    /// What the source's first page announced (version 2), for the progress estimate.
    var totalEntries: Int? { batches.totalEntries }

    /// Whether the final page is applied (or previewed).
    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

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

    /// Runs `step` on the page in hand, which it may change in place.
    mutating func continuing(_ step: (inout Self, inout PageWork) -> Action) -> Action {
        guard case .working(var work) = state else { preconditionFailure("no page in hand") }
        state = .modifying
        let action = step(&self, &work)
        if case .modifying = state { state = .working(work) }
        return action
    }

    /// The session only previews from here: it fetches nothing and commits nothing.
    mutating func beginPreview() {
        isPreview = true
        report.dryRun = true
    }

    /// Takes `page` in hand, with the batch held between pages.
    mutating func startWork(on page: ManifestPage, isFirst: Bool) {
        guard case .awaitingPage(let pending) = state else { preconditionFailure("a page arrived with one in hand") }
        state = .working(PageWork(page: page, isFirst: isFirst, pending: pending))
    }

    /// The PageDone went out: the next page, or the end.
    mutating func pageDoneSent() -> PageDoneSentAction {
        guard case .working(let work) = state else { preconditionFailure("PageDone with no page in hand") }
        if frames.pageApplied() {
            state = .finished
            return .finished
        }
        state = .awaitingPage(work.pending)
        return .receive
    }
}

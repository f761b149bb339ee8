import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Receives a source's changes into the local store: evaluates each manifest page by the merge
/// rule, fetches the winning records and the images it has no copy of, verifies every image,
/// and commits in one transaction each page (version 1) or each batch of pages (version 2),
/// together with the checkpoint when it keeps one. A version-2 batch commits on a thread of its
/// own (`BatchCommitter`) while the next pages arrive.
final class SinkSession {
    struct Options {
        var dryRun = false
        /// Where the checkpoint lives: set for a pulling client, nil for a server receiving a push.
        var checkpoint: (store: StoreID, direction: SyncDirection)?
        var progress: SyncProgressHandler?
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
        /// The clocks as the Hellos told them, when they differ by more than the skew: a
        /// refusal then says which clock is behind instead of blaming the record's origin.
        var clockSkew: ClockSkew?
        /// How a refusal names this node ("this node"; a server: "this server").
        var me = "this node"
        /// Whether the live versions the session deletes or overwrites go to the trash; nil
        /// keeps none.
        var keepReplaced: Bool?
    }

    /// When a version-2 sink commits what it holds: at the final page, or once the pages it
    /// holds list this many entries or their images this many bytes, whichever comes first.
    public enum Batch {
        public static let entries = 10_000
        public static let imageBytes: Int64 = 64 << 20
    }

    private let channel: any MessageChannel
    private let store: Store
    private let logger: Logger
    private var options: Options
    private var machine: SinkStateMachine
    private let committer: BatchCommitter
    /// Temporaries of the batch being gathered, removed once it is committed or abandoned.
    private var staged: [StagedImage] = []
    /// Received and checked, not yet committed (version 2 only).
    private var pending: [IncomingRecord] = []
    private var pendingKeys = Set<ItemKey>()
    private var pendingImageBytes: Int64 = 0
    private var pendingImages: [SHA256Digest: StagedImage] = [:]
    private var pendingStep: ReconcileStep?
    /// Whether applying what is held may unlink or replace image files already in place.
    private var pendingMayRemoveImages = false
    private var heldEntries = 0
    private var lastPage: ManifestPage?
    /// What the source's first page announced (version 2), for the progress estimate.
    private var totalEntries: Int?
    private var totalImageBytes: Int64?
    /// Items inserted, updated or deleted by what was received and checked so far, committed
    /// or not: what the progress line shows while a batch gathers (the summary counts commits).
    private var receivedItems = 0
    private var durableSeq: Int64 = 0
    /// What the session did not apply: no checkpoint passes it, so a later run retries it.
    private var holds: SinkHolds
    /// The horizon of the reconciliation this session takes part in (decided on its first page).
    private var reconciling: VersionStamp?
    private var preview: ReconcilePreview?
    /// The mass-deletion guard's running count, when the session applies under one.
    private var budget: DeletionBudget?

    init(channel: any MessageChannel, store: Store, options: Options, logger: Logger) {
        self.channel = channel
        self.store = store
        self.options = options
        self.logger = logger
        self.machine = SinkStateMachine()
        self.committer = BatchCommitter(store: store, keepReplaced: options.keepReplaced)
        self.holds = SinkHolds(store: store, clockSkew: options.clockSkew, me: options.me)
    }

    /// Runs until the source's final page is applied.
    func run(into report: inout SyncReport) throws {
        if options.dryRun {
            try receive(into: &report)
        } else {
            try store.bulkApply { try receive(into: &report) }
        }
    }

    private func receive(into report: inout SyncReport) throws {
        defer {
            // A batch still committing when the session fails ends first, and counts.
            if let committed = try? committer.wait() { absorb(committed, into: &report) }
            try? preview?.close()
            discardStaged()
        }
        var isFirst = true
        while true {
            let page = try receivePage()
            let step = try reconcileStep(for: page, isFirst: isFirst, report: &report)
            if isFirst {
                decideWhetherToApply(page, reconciling: step != nil, report: &report)
                if options.version >= 2 {
                    totalEntries = Int(page.entriesAhead)
                    totalImageBytes = page.imageBytesAhead
                }
                if let deletionGuard = options.deletionGuard, !options.dryRun {
                    budget = DeletionBudget(
                        rule: deletionGuard.rule, peer: deletionGuard.peer, liveItems: try store.status().items)
                    if options.version >= 2 { budget?.announced = page.tombstonesAhead }
                }
            }
            isFirst = false
            holds.startPage()
            try handle(page, reconcile: step, report: &report)
            if options.dryRun { durableSeq = page.throughSeq }  // nothing to apply is applied
            if let committed = try committer.poll() { absorb(committed, into: &report) }
            try channel.send(pageDone(page, report: report))
            reportProgress(report)
            if machine.pageApplied() { return }
        }
    }

    /// The PageDone for `page`. From version 3 it says where the first entry the session did not
    /// apply is, so a pushing source keeps its checkpoint below it, and what this page refused.
    private func pageDone(_ page: ManifestPage, report: SyncReport) -> Message {
        let durable = options.version >= 2 ? durableSeq : 0
        guard options.version >= ProtocolLimits.heldEntriesVersion else {
            return .pageDone(throughSeq: page.throughSeq, counts: report.counts, durableSeq: durable)
        }
        return .pageDone(
            throughSeq: page.throughSeq, counts: report.counts, durableSeq: durable,
            firstHeldSeq: holds.firstHeldSeq, refusals: holds.pageRefusals)
    }

    /// Turns the session into a preview unless `applyIf` accepts the source's announcement.
    private func decideWhetherToApply(_ page: ManifestPage, reconciling: Bool, report: inout SyncReport) {
        guard let applyIf = options.applyIf, !options.dryRun else { return }
        if options.version >= 2 && !reconciling && applyIf(page.tombstonesAhead) { return }
        options.dryRun = true
        options.checkpoint = nil
        report.dryRun = true
    }

    private func next() throws -> SinkStateMachine.Event {
        let frame = try channel.receive(expecting: machine.expectation)
        let event = try machine.received(frame)
        if case .peerError(let error) = event { throw SyncError.refusedByPeer(error) }
        return event
    }

    private func receivePage() throws -> ManifestPage {
        guard case .page(let page) = try next() else { preconditionFailure("state machine allows only a page here") }
        return page
    }

    private func handle(_ page: ManifestPage, reconcile step: ReconcileStep?, report: inout SyncReport) throws {
        report.manifestEntries += page.entries.count
        // A reconciliation's deletions are counted against what earlier pages listed: those
        // must be committed first.
        if budget != nil, step?.isFinal == true { try commitPending(report: &report, wait: true) }
        // A key changed twice during the session must meet its first change in the database.
        if !options.dryRun, page.entries.contains(where: { pendingKeys.contains($0.key) }) {
            try commitPending(report: &report, wait: true)
        } else if !options.dryRun, committer.holdsAny(page.entries.lazy.map(\.key)) {
            try waitForCommit(report: &report)
        }
        // One read of this page's local rows serves the merge rule and the image decisions.
        let local = try store.mergeBases(page.entries.map(\.key))
        let (acceptable, refusals) = holds.screen(page)
        let plan = MergePlanner.plan(
            ManifestPage(entries: acceptable, throughSeq: page.throughSeq, isFinal: page.isFinal), local: local)
        report.refused += refusals.map { SyncReport.Refusal(key: $0.key.rawValue, reason: $0.reason) }
        report.skipped += plan.skipped
        if options.dryRun {
            report.inserted += plan.inserted.map(\.rawValue)
            report.updated += plan.updated.map(\.rawValue)
            report.deleted += plan.deleted.map(\.rawValue)
            report.tombstonesRecorded += plan.tombstonesRecorded.count
            if let step { try previewReconciliation(step, report: &report) }
            return
        }
        var incoming = plan.tombstones.map { IncomingRecord(item: $0, image: nil) }
        var deletions = plan.deleted.count
        if !plan.fetch.isEmpty {
            let records = try fetchRecords(plan.fetch, report: &report)
            var winners: [Item] = []
            var withheld: [ItemKey] = []
            for record in records where MergePlanner.wins(record.version, over: local[record.key]) {
                // A record can be newer than its manifest entry: its own stamp passes the guard too.
                if let reason = holds.refuses(record) {
                    report.refused.append(SyncReport.Refusal(key: record.key.rawValue, reason: reason))
                    withheld.append(record.key)
                } else {
                    winners.append(record)
                    // The item was deleted at the source after its manifest entry was read.
                    if record.deleted, let mine = local[record.key], !mine.deleted { deletions += 1 }
                }
            }
            report.skipped += records.count - winners.count - withheld.count
            try admit(deletions + reconciliationDeletions(step, page: page), report: &report)
            incoming += try attachImages(to: winners, local: local, withheld: &withheld, report: &report)
            holds.hold(before: withheld, in: page)
        } else {
            try admit(deletions + reconciliationDeletions(step, page: page), report: &report)
        }
        pending += incoming
        for record in incoming {
            pendingKeys.insert(record.item.key)
            pendingImageBytes += record.image?.ref.size ?? 0
            let liveHere = local[record.item.key].map { !$0.deleted } ?? false
            if liveHere, local[record.item.key]?.image != nil { pendingMayRemoveImages = true }
            // A tombstone for a key this store never had live records a deletion, not an item.
            if !record.item.deleted || liveHere { receivedItems += 1 }
        }
        heldEntries += page.entries.count
        if let step {
            pendingStep = pendingStep.map { $0.followed(by: step) } ?? step
            pendingMayRemoveImages = true
        }
        lastPage = page
        if options.version < 2 || page.isFinal || heldEntries >= options.commitEvery
            || pendingImageBytes >= Batch.imageBytes
        {
            // Version 1 acknowledges each page as applied; the final page needs everything
            // durable; a reconciliation keeps to one step at a time.
            let wait = options.version < 2 || page.isFinal || reconciling != nil
            try commitPending(report: &report, wait: wait)
        }
    }

    /// Lets the mass-deletion guard judge this page's deletions before anything of it is
    /// applied; when they would trip it, commits what the session holds from earlier pages (all
    /// within the limit) and stops.
    private func admit(_ deletions: Int, report: inout SyncReport) throws {
        guard var budget else { return }
        do {
            try budget.admit(deletions)
            self.budget = budget
        } catch {
            try commitPending(report: &report, wait: true)
            throw error
        }
    }

    /// What the final page of a reconciliation will delete besides its entries: live items no
    /// page listed, stamped before the horizon (counted only under a deletion guard).
    private func reconciliationDeletions(_ step: ReconcileStep?, page: ManifestPage) throws -> Int {
        guard budget != nil, let step, step.isFinal, let reconciling else { return 0 }
        return try store.reconciliationVictimCount(
            source: step.source, horizon: reconciling, countRecorded: !(step.isFirstPage && step.horizon != nil),
            alsoListed: step.listed)
    }

    /// Hands what the session holds to the committer as one transaction, with the checkpoint of
    /// the last page; with `wait`, returns once it (and every batch before it) is committed.
    private func commitPending(report: inout SyncReport, wait: Bool) throws {
        if let page = lastPage {
            let batch = BatchCommitter.Batch(
                records: pending, checkpoint: checkpointUpdate(page), reconcile: pendingStep,
                throughSeq: page.throughSeq, keys: pendingKeys, mayRemoveImages: pendingMayRemoveImages,
                staged: staged)
            pending = []
            pendingKeys = []
            pendingImageBytes = 0
            pendingImages.removeAll()
            pendingStep = nil
            pendingMayRemoveImages = false
            heldEntries = 0
            lastPage = nil
            staged = []
            do {
                if let committed = try committer.submit(batch) { absorb(committed, into: &report) }
            } catch {
                // The batch before failed, so this one was never queued: its temporaries are ours.
                for image in batch.staged { image.discard() }
                throw error
            }
        }
        if wait { try waitForCommit(report: &report) }
    }

    private func waitForCommit(report: inout SyncReport) throws {
        if let committed = try committer.wait() { absorb(committed, into: &report) }
    }

    /// Counts a committed batch and moves the durable point past it.
    private func absorb(_ committed: BatchCommitter.Committed, into report: inout SyncReport) {
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

    /// The page's part in a full reconciliation, or nil. The first page decides: it carries the
    /// source's horizon (a listing from 0), or an interrupted reconciliation with this source
    /// continues from the checkpoint it reached.
    private func reconcileStep(for page: ManifestPage, isFirst: Bool, report: inout SyncReport) throws
        -> ReconcileStep?
    {
        guard let source = options.source else { return nil }
        let horizon = options.version >= ProtocolLimits.reconciliationVersion ? page.reconcileHorizon : nil
        if isFirst {
            reconciling = try horizon ?? store.reconciliationInProgress(source: source.store)
            report.reconcileHorizon = reconciling.map { Int64($0.milliseconds) }
        }
        guard reconciling != nil else { return nil }
        return ReconcileStep(
            source: source.store, sourceNode: source.node, horizon: horizon, isFirstPage: isFirst,
            listed: page.entries.map(\.key), isFinal: page.isFinal)
    }

    /// A dry run's reconciliation: lists the keys aside and reports what the final page would delete.
    private func previewReconciliation(_ step: ReconcileStep, report: inout SyncReport) throws {
        let preview =
            self.preview ?? ReconcilePreview(store: store, source: step.source, continuing: step.horizon == nil)
        self.preview = preview
        try preview.record(step.listed)
        guard step.isFinal, let reconciling else { return }
        let victims = try preview.victims(horizon: reconciling).map(\.rawValue)
        report.deleted += victims
        report.reconciled += victims
    }

    private func checkpointUpdate(_ page: ManifestPage) -> CheckpointUpdate? {
        guard let target = options.checkpoint else { return nil }
        return CheckpointUpdate(
            peerStore: target.store, direction: target.direction, seq: holds.checkpoint(through: page.throughSeq))
    }

    private func fetchRecords(_ keys: [ItemKey], report: inout SyncReport) throws -> [Item] {
        var records: [Item] = []
        for batch in keys.chunked(ProtocolLimits.recordBatchSize) {
            try channel.send(.fetchRecords(Array(batch)))
            machine.requestedRecords(Array(batch))
            guard case .records(let items) = try next() else { preconditionFailure("only Records allowed here") }
            records += items
        }
        report.recordsTransferred += records.count
        return records
    }

    /// Gives each winning record the image it names: nothing when this key already has that
    /// image, a local copy when another item has the same bytes (no bytes move), else bytes
    /// fetched from the source once per digest and verified against it.
    private func attachImages(
        to records: [Item], local: [ItemKey: Item], withheld: inout [ItemKey], report: inout SyncReport
    ) throws -> [IncomingRecord] {
        let withImages = records.filter { !$0.deleted && $0.image != nil }
        var wanted: [ImageWanted] = []
        var plans: [ItemKey: ImageSource] = [:]
        var fetchedDigests = Set<SHA256Digest>()
        // Files the batch in flight may unlink are no source for a copy until it is committed.
        if !withImages.isEmpty && committer.mayRemoveImages { try waitForCommit(report: &report) }
        for item in withImages {
            let image = item.image!
            guard image.size <= store.maxImageBytes else {
                throw SyncError.imageTooLarge(key: item.key.rawValue, size: image.size, limit: store.maxImageBytes)
            }
            if let mine = local[item.key], !mine.deleted, mine.image == image {
                plans[item.key] = ImageSource.alreadyHere
            } else if let held = pendingImages[image.digest] {
                plans[item.key] = ImageSource.staged(held)
            } else if let file = try store.imageFile(withDigest: image.digest) {
                plans[item.key] = ImageSource.localCopy(file)
            } else {
                plans[item.key] = ImageSource.fetched
                if fetchedDigests.insert(image.digest).inserted {
                    wanted.append(ImageWanted(key: item.key, digest: image.digest))
                }
            }
        }
        var fetched: [SHA256Digest: StagedImage] = [:]
        for group in wanted.chunked(ProtocolLimits.imagesPerRequest) {
            try channel.send(.fetchImages(Array(group)))
            machine.requestedImages(Array(group))
            for _ in group {
                if let image = try receiveImage(report: &report) {
                    fetched[image.ref.digest] = image
                    pendingImages[image.ref.digest] = image
                }
            }
        }
        var result: [IncomingRecord] = []
        for item in records {
            guard !item.deleted, let image = item.image, let plan = plans[item.key] else {
                result.append(IncomingRecord(item: item, image: nil))
                continue
            }
            switch plan {
            case .alreadyHere:
                result.append(IncomingRecord(item: item, image: nil))
            case .staged(let held):
                result.append(IncomingRecord(item: item, image: held))
            case .localCopy(let file):
                let copy = try store.stageImage(copying: file, expected: image)
                staged.append(copy)
                result.append(IncomingRecord(item: item, image: copy))
            case .fetched:
                if let staged = fetched[image.digest] {
                    result.append(IncomingRecord(item: item, image: staged))
                } else {
                    // The source no longer has these bytes (changed meanwhile, or lost). The
                    // record is not applied without its image, and the checkpoint stays before
                    // it so that a later pull tries again.
                    report.skipped += 1
                    withheld.append(item.key)
                    report.withheld.append(
                        SyncReport.Refusal(
                            key: item.key.rawValue,
                            reason: "its image (SHA-256 \(image.digest)) is missing on the source; it is applied "
                                + "once the source has the file again (`hp-sync verify --repair` there)"))
                }
            }
        }
        return result
    }

    private enum ImageSource {
        case alreadyHere
        /// Bytes an earlier page of this batch already fetched.
        case staged(StagedImage)
        case localCopy(URL)
        case fetched
    }

    /// Streams one announced image into a staging file; nil when the source says it is missing.
    private func receiveImage(report: inout SyncReport) throws -> StagedImage? {
        let header: ImageHeaderMessage
        switch try next() {
        case .imageFinished(let finished):
            guard finished.missing else {
                throw ProtocolError.invalidField(
                    message: "ImageHeader", field: "size", problem: "is 0 for an image that is not missing")
            }
            return nil
        case .imageStarted(let started): header = started
        default: preconditionFailure("only ImageHeader allowed here")
        }
        guard header.size <= store.maxImageBytes else {
            throw SyncError.imageTooLarge(
                key: header.key.rawValue, size: header.size, limit: store.maxImageBytes)
        }
        let staging = try store.stageImage(expected: ImageRef(digest: header.digest, size: header.size))
        do {
            repeat {
                guard case .imageChunk(let bytes) = try next() else { preconditionFailure("only chunks here") }
                try bytes.withUnsafeBytes { try staging.write($0) }
            } while !machine.imageComplete
            let image = try staging.finish(sentBy: header.key)
            staged.append(image)
            report.imagesTransferred += 1
            report.imageBytes += header.size
            reportProgress(report)
            return image
        } catch {
            staging.abort()
            throw error
        }
    }

    private func reportProgress(_ report: SyncReport) {
        options.progress?(
            SyncProgress(
                report, received: receivedItems, bytes: channel.bytesSent + channel.bytesReceived,
                totalEntries: totalEntries, totalImageBytes: totalImageBytes))
    }

    private func discardStaged() {
        for image in staged { image.discard() }
        staged.removeAll()
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

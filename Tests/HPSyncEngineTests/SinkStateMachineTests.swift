import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Testing

@testable import HPSyncEngine

/// The sink's decisions without I/O: when it commits, what it waits for, what the deletion
/// guard lets through, and where the checkpoint and `first_held_seq` stay.
@Suite struct SinkStateMachineTests {
    static let origin = NodeID(certificateDER: [7])
    static let sourceStore = StoreID.random()

    static func version(_ milliseconds: UInt64) -> Version {
        Version(stamp: VersionStamp(milliseconds: milliseconds), origin: origin)
    }

    static func item(_ key: ItemKey, at milliseconds: UInt64, deleted: Bool = false) -> Item {
        deleted
            ? Item.tombstone(key: key, version: version(milliseconds))
            : Item(key: key, name: "item", dateCreatedMilliseconds: 1, version: version(milliseconds))
    }

    static func entry(_ item: Item, seq: Int64) -> ManifestEntry {
        ManifestEntry(key: item.key, version: item.version, deleted: item.deleted, seq: seq)
    }

    /// Pages of `items`, `perPage` entries each, seqs from 1.
    static func pages(_ items: [Item], perPage: Int) -> [ManifestPage] {
        let entries = items.enumerated().map { entry($0.element, seq: Int64($0.offset + 1)) }
        let chunks = entries.chunked(perPage)
        return chunks.enumerated().map { index, chunk in
            ManifestPage(entries: Array(chunk), throughSeq: chunk.last!.seq, isFinal: index == chunks.count - 1)
        }
    }

    /// Plays the session's part against fakes: the store's rows, the source's records, and a
    /// committer that ends a batch only when asked to wait.
    struct Driver {
        var machine: SinkStateMachine
        var local: [ItemKey: Item] = [:]
        var source: [ItemKey: Item] = [:]
        var liveItems = 0
        /// How many times the machine asked for the live items to be counted.
        var liveCounts = 0
        /// Each batch handed over, and whether the machine waited for it.
        var commits: [(batch: PendingBatch.Sealed, wait: Bool)] = []
        var inFlight: PendingBatch.Sealed?
        var reads: [[ItemKey]] = []
        var readsForApply: [Bool] = []
        /// For each FetchImages, how many batches had been handed over when it went out. The
        /// source answers every image as missing (staging needs a store).
        var imageRequests: [(wanted: [ImageWanted], afterCommits: Int)] = []
        var frames: [IncomingFrame] = []
        /// The session's answer to `.decideWhetherToApply`.
        var applyIf: (Int64) -> Bool = { _ in true }
        /// The clock guard: why it refuses a version, or nil.
        var clockGuard: (Version) -> String? = { _ in nil }
        /// The versions each `.checkClocks` asked about.
        var clockChecks: [[Version]] = []

        init(
            _ configuration: SinkStateMachine.Configuration, batches: BatchPolicy? = nil,
            uptime: @escaping () -> UInt64 = { 0 }
        ) {
            machine = SinkStateMachine(configuration, batches: batches, uptime: uptime)
        }

        /// Feeds one page and performs what the machine asks until its PageDone; returns it.
        mutating func feed(_ page: ManifestPage) throws -> Message {
            var pageDone: Message?
            var action = try machine.received(.message(.manifestPage(page)))
            while true {
                switch action {
                case .receive where !frames.isEmpty:
                    action = try machine.received(frames.removeFirst())
                case .receive:
                    return try #require(pageDone)
                case .locateImages:
                    action = machine.imagesLocated([:])
                case .fetchImages(let wanted):
                    imageRequests.append((wanted, commits.count))
                    frames += wanted.map {
                        .message(
                            .imageHeader(ImageHeaderMessage(key: $0.key, digest: $0.digest, size: 0, missing: true)))
                    }
                    action = .receive
                case .lookUpReconciliation:
                    action = machine.reconciliationLookedUp(nil)
                case .countLiveItems:
                    liveCounts += 1
                    action = machine.liveItemsCounted(liveItems)
                case .decideWhetherToApply(let tombstones):
                    action = machine.applyDecided(applyIf(tombstones))
                case .checkClocks(let versions):
                    clockChecks.append(versions)
                    let refusals = versions.enumerated().compactMap { index, version in
                        clockGuard(version).map { SinkStateMachine.ClockRefusal(index: index, reason: $0) }
                    }
                    action = machine.clocksChecked(refusals)
                case .commit(.submit(let batch, let wait)):
                    if let batch {
                        endInFlight()
                        inFlight = batch
                        commits.append((batch, wait))
                    }
                    if wait { endInFlight() }
                    action = machine.proceed()
                case .commit(.wait):
                    endInFlight()
                    action = machine.proceed()
                case .commit(.poll):
                    action = machine.proceed()
                case .readLocal(let keys, let applyingNext):
                    reads.append(keys)
                    readsForApply.append(applyingNext)
                    action = machine.localRead(local.filter { keys.contains($0.key) })
                case .fetchRecords(let keys):
                    action = try machine.received(.message(.records(keys.compactMap { source[$0] })))
                case .sendPageDone(let message):
                    pageDone = message
                    if machine.pageDoneSent() == .finished { return try #require(pageDone) }
                    action = .receive
                case .fail(let error):
                    throw error
                case .previewReconciliation, .countReconciliationVictims, .stageImage, .writeChunk, .stageCopies:
                    Issue.record("unexpected action \(action)")
                    return try #require(pageDone)
                }
            }
        }

        /// The committer ends the batch in flight: the store now holds its records.
        mutating func endInFlight() {
            guard let batch = inFlight else { return }
            inFlight = nil
            for record in batch.records { local[record.item.key] = record.item }
            machine.batchCommitted(BatchCommitter.Committed(throughSeq: batch.throughSeq, outcome: ApplyOutcome()))
        }
    }

    static func durableSeq(_ message: Message) -> Int64? {
        guard case .pageDone(_, _, let durable, _, _) = message else { return nil }
        return durable
    }

    @Test func version2GathersPagesUntilTheBatchIsFullAndWaitsOnlyAtTheEnd() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.plan.commitEvery = 4
        var driver = Driver(configuration)
        let items = (0..<5).map { _ in Self.item(.random(), at: 10, deleted: true) }
        let pages = Self.pages(items, perPage: 2)

        #expect(Self.durableSeq(try driver.feed(pages[0])) == 0)
        #expect(driver.commits.isEmpty)
        // The second page fills the batch: it goes to the committer, and the sink asks for
        // the next page without waiting.
        #expect(Self.durableSeq(try driver.feed(pages[1])) == 0)
        #expect(driver.commits.map(\.batch.records.count) == [4])
        #expect(driver.commits.map(\.wait) == [false])
        #expect(driver.commits[0].batch.throughSeq == 4)
        // The final page needs everything durable.
        #expect(Self.durableSeq(try driver.feed(pages[2])) == 5)
        #expect(driver.commits.map(\.wait) == [false, true])
        #expect(driver.machine.isFinished)
    }

    @Test func version1CommitsEveryPageAndWaits() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 1
        var driver = Driver(configuration)
        let pages = Self.pages((0..<4).map { _ in Self.item(.random(), at: 10, deleted: true) }, perPage: 2)
        for page in pages { _ = try driver.feed(page) }
        #expect(driver.commits.map(\.wait) == [true, true])
        #expect(driver.commits.map(\.batch.throughSeq) == [2, 4])
    }

    @Test func aKeyChangedAgainMeetsItsFirstChangeInTheDatabase() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        var driver = Driver(configuration)
        let key = ItemKey.random()
        let first = ManifestPage(
            entries: [Self.entry(Self.item(key, at: 10, deleted: true), seq: 1)], throughSeq: 1, isFinal: false)
        let again = ManifestPage(
            entries: [Self.entry(Self.item(key, at: 20, deleted: true), seq: 2)], throughSeq: 2, isFinal: true)
        _ = try driver.feed(first)
        #expect(driver.commits.isEmpty)
        _ = try driver.feed(again)
        // The held page was committed (and waited for) before the key was read again.
        #expect(driver.commits.count == 2)
        #expect(driver.commits[0].wait)
        #expect(driver.commits[0].batch.keys == [key])
        #expect(driver.local[key]?.version == Self.version(20))
    }

    @Test func recordsTheSourceSendsAreFetchedAndHeld() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        var driver = Driver(configuration)
        let items = (0..<3).map { _ in Self.item(.random(), at: 10) }
        for item in items { driver.source[item.key] = item }
        _ = try driver.feed(Self.pages(items, perPage: 3)[0])
        #expect(Set(driver.commits[0].batch.records.map(\.item.key)) == Set(items.map(\.key)))
        #expect(driver.machine.report.recordsTransferred == 3)
        #expect(driver.machine.receivedItems == 3)
    }

    @Test func theDeletionGuardStopsBeforeThePageThatWouldTripIt() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.plan.massDeleteGuard = MassDeleteGuard(maxDelete: 2)
        configuration.peer = "peer"
        var driver = Driver(configuration)
        let live = (0..<3).map { _ in Self.item(.random(), at: 10) }
        for item in live { driver.local[item.key] = item }
        driver.liveItems = 100
        let deletions = live.map { Self.item($0.key, at: 20, deleted: true) }
        let pages = Self.pages(deletions, perPage: 2)

        _ = try driver.feed(pages[0])
        #expect(driver.machine.budget?.counted == 2)
        #expect(driver.commits.isEmpty)
        #expect(throws: MassDeleteRefused.self) { try driver.feed(pages[1]) }
        // What came before the page that trips the guard is committed, and nothing of it.
        #expect(driver.commits.count == 1)
        #expect(driver.commits[0].wait)
        #expect(driver.commits[0].batch.throughSeq == 2)
        #expect(driver.local[live[2].key]?.deleted == false)
    }

    /// Issue 18: the guard's base (a count of the live items) is read only when the session can
    /// delete something; a final first page that lists nothing (a pull that finds no change)
    /// skips it, and one that lists anything still counts and still stops a mass deletion.
    @Test func theGuardCountsLiveItemsOnlyWhenThePullCanDelete() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.plan.massDeleteGuard = MassDeleteGuard()
        configuration.peer = "peer"
        var unchanged = Driver(configuration)
        _ = try unchanged.feed(ManifestPage(entries: [], throughSeq: 0, isFinal: true))
        #expect(unchanged.liveCounts == 0)
        #expect(unchanged.machine.budget == nil)

        var deleting = Driver(configuration)
        let live = (0..<20).map { _ in Self.item(.random(), at: 10) }
        for item in live { deleting.local[item.key] = item }
        deleting.liveItems = 20
        let deletions = live.map { Self.item($0.key, at: 20, deleted: true) }
        #expect(throws: MassDeleteRefused.self) { try deleting.feed(Self.pages(deletions, perPage: 20)[0]) }
        #expect(deleting.liveCounts == 1)
        #expect(deleting.commits.isEmpty)
    }

    @Test func aRefusedEntryHoldsTheCheckpointAndIsNamedInPageDone() throws {
        let refused = Self.item(.random(), at: 99, deleted: true)
        var configuration = SinkStateMachine.Configuration()
        configuration.version = ProtocolLimits.heldEntriesVersion
        configuration.plan.commitEvery = 1
        configuration.checkpoint = (Self.sourceStore, .pull)
        var driver = Driver(configuration)
        driver.clockGuard = { $0 == refused.version ? "stamped ahead" : nil }
        let items = [Self.item(.random(), at: 10, deleted: true), refused, Self.item(.random(), at: 10, deleted: true)]
        let pages = Self.pages(items + [Self.item(.random(), at: 10, deleted: true)], perPage: 3)

        let first = try driver.feed(pages[0])
        guard case .pageDone(let through, _, _, let firstHeld, let refusals) = first else {
            Issue.record("no PageDone")
            return
        }
        #expect(through == 3)
        #expect(firstHeld == 2)
        #expect(refusals == [PageRefusal(key: refused.key, reason: "stamped ahead")])
        #expect(driver.commits[0].batch.checkpoint?.seq == 1)
        #expect(!driver.commits[0].batch.keys.contains(refused.key))
        // Later pages do not move the checkpoint past the entry held.
        let second = try driver.feed(pages[1])
        guard case .pageDone(_, _, _, let stillHeld, let none) = second else {
            Issue.record("no PageDone")
            return
        }
        #expect(stillHeld == 2)
        #expect(none.isEmpty)
        #expect(driver.commits[1].batch.checkpoint?.seq == 1)
    }

    @Test func aSourceAnnouncingTooManyDeletionsGetsAPreview() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.checkpoint = (Self.sourceStore, .pull)
        configuration.asksBeforeApplying = true
        var driver = Driver(configuration)
        driver.applyIf = { $0 < 5 }
        var page = Self.pages((0..<2).map { _ in Self.item(.random(), at: 10, deleted: true) }, perPage: 2)[0]
        page.tombstonesAhead = 5
        let pageDone = try driver.feed(page)
        #expect(driver.machine.report.dryRun)
        #expect(driver.commits.isEmpty)
        #expect(driver.machine.report.tombstonesRecorded == 2)
        // Nothing to apply is applied: the preview says so.
        #expect(Self.durableSeq(pageDone) == 2)
    }

    /// Issue 18: `count` newer versions of local items without images, and `withImages` whose
    /// new version names an image this store does not have, on one final page.
    static func editsWithNewImages(_ driver: inout Driver, count: Int, withImages: Int) -> ManifestPage {
        var items: [Item] = []
        for index in 0..<(count + withImages) {
            let key = ItemKey.random()
            driver.local[key] = Self.item(key, at: 10)
            var edited = Self.item(key, at: 20)
            if index >= count {
                let digest = SHA256Digest(bytes: (0..<32).map { UInt8(truncatingIfNeeded: index &+ $0) })!
                edited.image = ImageRef(digest: digest, size: 1_000)
            }
            driver.source[key] = edited
            items.append(edited)
        }
        return Self.pages(items, perPage: items.count)[0]
    }

    /// Issue 18: the records of a page that need no image bytes are committed before its images
    /// are asked for, without a checkpoint, so their apply overlaps the transfer; the page's own
    /// commit (with its images) carries the checkpoint and is waited for.
    @Test func aPageCommitsWhatNeedsNoImageAheadOfItsImages() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.checkpoint = (Self.sourceStore, .pull)
        var driver = Driver(configuration)
        let count = BatchPolicy.aheadOfImages
        let page = Self.editsWithNewImages(&driver, count: count, withImages: 2)
        _ = try driver.feed(page)
        try #require(driver.commits.count == 2)
        let ahead = driver.commits[0]
        #expect(!ahead.wait)
        #expect(ahead.batch.checkpoint == nil)
        #expect(ahead.batch.throughSeq == 0, "no durable point moves before the page's own commit")
        #expect(ahead.batch.records.count == count)
        #expect(ahead.batch.records.allSatisfy { $0.item.image == nil && $0.image == nil })
        #expect(driver.imageRequests.map(\.afterCommits) == [1], "the images were asked for after it")
        #expect(driver.imageRequests.first?.wanted.count == 2)
        let own = driver.commits[1]
        #expect(own.wait)
        #expect(own.batch.checkpoint != nil)
        #expect(own.batch.throughSeq == page.throughSeq)
        // The source had lost both images: their records are held back, the rest is applied.
        #expect(driver.machine.report.withheld.count == 2)
        #expect(driver.local.values.filter { $0.version == Self.version(20) }.count == count)
        #expect(driver.machine.receivedItems == count)
    }

    /// Issue 18: a page read with no batch in flight, outside a bulk pull, may be read where its
    /// apply will find the rows; with a batch in flight, or in a bulk pull (whose writer keeps a
    /// small cache to bound its memory), it is read as before.
    @Test func onlyAnIncrementalPageWithNothingInFlightIsReadForItsApply() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.plan.commitEvery = 2
        var driver = Driver(configuration)
        let items = (0..<5).map { _ in Self.item(.random(), at: 20) }
        for item in items {
            driver.local[item.key] = Self.item(item.key, at: 10)
            driver.source[item.key] = item
        }
        let pages = Self.pages(items, perPage: 2)
        for page in pages { _ = try driver.feed(page) }
        // The first page's batch is full and goes to the committer without a wait: the second
        // page is read while it is in flight.
        #expect(driver.readsForApply.prefix(2) == [true, false])

        var bulk = Driver(configuration, batches: BatchPolicy(commitEvery: 2, bulkLimit: 4))
        for item in items {
            bulk.local[item.key] = Self.item(item.key, at: 10)
            bulk.source[item.key] = item
        }
        var first = pages[0]
        first.entriesAhead = 100
        _ = try bulk.feed(first)
        #expect(bulk.machine.batches.isBulk)
        #expect(bulk.readsForApply == [false])
    }

    /// A batch committed ahead of its images was sealed with the durable point of that moment;
    /// a batch before it that ends first has moved the point on, and it stays there.
    @Test func theDurablePointNeverMovesBack() {
        var machine = SinkStateMachine()
        machine.batchCommitted(BatchCommitter.Committed(throughSeq: 40, outcome: ApplyOutcome()))
        machine.batchCommitted(BatchCommitter.Committed(throughSeq: 0, outcome: ApplyOutcome()))
        #expect(machine.durableSeq == 40)
    }

    /// Fewer such records than `aheadOfImages`, or a bulk pull (whose pages gather into large
    /// batches): the page commits once.
    @Test func aSmallPageOrABulkPullCommitsOnce() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        configuration.checkpoint = (Self.sourceStore, .pull)
        var small = Driver(configuration)
        _ = try small.feed(
            Self.editsWithNewImages(&small, count: BatchPolicy.aheadOfImages - 1, withImages: 2))
        #expect(small.commits.count == 1)
        #expect(small.imageRequests.map(\.afterCommits) == [0])

        var bulk = Driver(configuration, batches: BatchPolicy(bulkLimit: 100))
        let page = Self.editsWithNewImages(&bulk, count: 200, withImages: 2)
        var announced = page
        announced.entriesAhead = 1_000
        _ = try bulk.feed(announced)
        #expect(bulk.machine.batches.isBulk)
        #expect(bulk.commits.count == 1)
    }

    /// A PageDone answers with the next page or the end, and every commit the machine asks for
    /// is followed by `proceed()`.
    @Test func aPageDoneAnswersWithTheNextPageOrTheEnd() throws {
        var configuration = SinkStateMachine.Configuration()
        configuration.version = 2
        var machine = SinkStateMachine(configuration)
        var commits: [SinkStateMachine.Commit] = []
        /// Answers what the machine asks until it sends its PageDone.
        func untilPageDone(_ first: SinkStateMachine.Action) throws {
            var action = first
            while true {
                switch action {
                case .readLocal: action = machine.localRead([:])
                case .countLiveItems: action = machine.liveItemsCounted(0)
                case .commit(let commit):
                    commits.append(commit)
                    action = machine.proceed()
                case .sendPageDone: return
                default:
                    Issue.record("unexpected action \(action)")
                    return
                }
            }
        }
        try untilPageDone(
            machine.received(.message(.manifestPage(ManifestPage(entries: [], throughSeq: 0, isFinal: false)))))
        #expect(machine.pageDoneSent() == .receive)
        #expect(!machine.isFinished)
        try untilPageDone(
            machine.received(.message(.manifestPage(ManifestPage(entries: [], throughSeq: 0, isFinal: true)))))
        #expect(machine.pageDoneSent() == .finished)
        #expect(machine.isFinished)
        // Each PageDone waits for a poll of the batch in flight.
        #expect(commits.filter { if case .poll = $0 { true } else { false } }.count == 2)
    }
}

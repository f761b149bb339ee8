import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncTesting
import Testing

@testable import HPSyncEngine
@testable import HPSyncStore

/// Version 2's PageDone: it asks for the next page before the sink commits, `durable_seq` says
/// what is committed, and a sink that holds several pages still applies each change exactly once.
@Suite struct BatchedCommitTests {
    static let origin = NodeID(certificateDER: [9])

    static func page(through: Int64, final: Bool) -> ManifestPage {
        let entry = ManifestEntry(
            key: ItemKey.random(), version: Version(stamp: VersionStamp(milliseconds: 1), origin: origin),
            deleted: false, seq: through)
        return ManifestPage(entries: [entry], throughSeq: through, isFinal: final)
    }

    static func isPageDone(_ frame: IncomingFrame) -> Bool {
        if case .message(.pageDone) = frame { return true }
        return false
    }

    @Test func versionTwoSourceAdvancesOnlyWhatTheSinkSaysIsDurable() throws {
        var machine = SourceStateMachine(version: 2)
        machine.sent(Self.page(through: 5, final: false))
        let first = try machine.received(.pageDone(throughSeq: 5, counts: ChangeCounts(), durableSeq: 0))
        #expect(first == .sendNextPage(after: 5, durableThrough: nil, sinkCounts: ChangeCounts()))
        machine.sent(Self.page(through: 9, final: false))
        let second = try machine.received(.pageDone(throughSeq: 9, counts: ChangeCounts(), durableSeq: 5))
        #expect(second == .sendNextPage(after: 9, durableThrough: 5, sinkCounts: ChangeCounts()))
        machine.sent(Self.page(through: 12, final: false))
        #expect(throws: ProtocolError.self, "durable_seq must not go backwards") {
            try machine.received(.pageDone(throughSeq: 12, counts: ChangeCounts(), durableSeq: 4))
        }
    }

    @Test func versionTwoFinalPageDoneMustHaveEverythingDurable() throws {
        var machine = SourceStateMachine(version: 2)
        machine.sent(Self.page(through: 7, final: true))
        #expect(throws: ProtocolError.self) {
            try machine.received(.pageDone(throughSeq: 7, counts: ChangeCounts(), durableSeq: 3))
        }
        var good = SourceStateMachine(version: 2)
        good.sent(Self.page(through: 7, final: true))
        #expect(
            try good.received(.pageDone(throughSeq: 7, counts: ChangeCounts(), durableSeq: 7))
                == .finished(sinkCounts: ChangeCounts()))
    }

    @Test func versionOnePageDoneMeansDurableWhateverDurableSeqSays() throws {
        var machine = SourceStateMachine(version: 1)
        machine.sent(Self.page(through: 5, final: false))
        let action = try machine.received(.pageDone(throughSeq: 5, counts: ChangeCounts(), durableSeq: 0))
        #expect(action == .sendNextPage(after: 5, durableThrough: 5, sinkCounts: ChangeCounts()))
    }

    @Test func aCutPushLeavesThePushCheckpointAtWhatTheServerCommitted() throws {
        let a = try TestNode("a")
        let server = try TestNode("server")
        try server.allow(a)
        for i in 0..<3_000 { _ = try a.add("item \(i)") }
        // The server (a version-2 sink) holds pages until it has 10,000 entries, the final page,
        // or the pages come within two pages of the 3,000 announced with more than two held; so
        // the first page, acknowledged, is not yet durable there when the second's PageDone is cut.
        #expect(throws: (any Error).self) {
            try Sync.session(a, server, .pipe) { channel in
                try SyncClient(store: a.store, logger: quietLogger).push(
                    over: ObservingChannel.cut(channel, after: 1, of: Self.isPageDone), serverNodeID: server.nodeID,
                    peerName: "server")
            } wrap: {
                $0
            }
        }
        let committedThere = try server.snapshot().count
        let checkpoint = try a.store.checkpoint(peerStore: server.store.storeID, direction: .push)
        #expect(committedThere == 0)
        #expect(checkpoint == 0, "the push checkpoint follows durable_seq, not the acknowledged pages")
        try Sync.push(a, to: server)
        #expect(try server.snapshot() == a.snapshot())
        #expect(try a.store.checkpoint(peerStore: server.store.storeID, direction: .push) == a.store.lastSeq)
    }

    @Test func aKeyChangedTwiceWithinOneSessionIsAppliedInOrder() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let first = try a.add("changes twice", image: jpeg(1))
        let others = try (0..<2_500).map { try a.add("item \($0)") }
        try Sync.pull(b, from: a)
        // `first` gets a new image (the lowest new seq, so on the first page) and 2,500 edits
        // follow; while b holds the first page uncommitted, the image goes back to the old one.
        // (The server reads each page ahead as soon as it sent the one before, so the change is
        // made when the first page arrives: the third page is read after it.)
        try a.setImage(first.key, jpeg(2))
        for item in others { _ = try a.store.edit(item.key, ItemEdit(valueInDollars: 7)) }
        let (report, changedBack) = try Self.pull(b, from: a, onPage: 1) { try a.setImage(first.key, jpeg(1)) }
        #expect(changedBack)
        #expect(report.manifestEntries == 2_502, "the key appears on the first page and again on the last")
        #expect(try b.snapshot() == a.snapshot())
        #expect(b.imageBytes(first.key).map { SHA256.hash($0) } == SHA256.hash(jpeg(1)))
        #expect(try b.store.verify(repair: false).isClean)
    }

    /// The batch before commits on a thread of its own while the next pages arrive: a key it
    /// holds that changes again must wait for that commit, else the merge reads the old row
    /// ("image was not staged" when the image went back to the one the old row names).
    @Test func aKeyInTheBatchStillCommittingWaitsForIt() throws {
        let a = try TestNode("a")
        // Before each batch of remote records b applies, while armed: the second one, which
        // holds the key, waits to commit until the last manifest page has arrived.
        let applies = Locked(0)
        let armed = Locked(false)
        let lastPageArrived = Locked(false)
        let heldUntilLastPage = Locked(false)
        var configuration = StoreConfiguration()
        configuration.testHooks.beforeApply = {
            guard armed.current else { return }
            let count = applies.withLock { count in
                count += 1
                return count
            }
            guard count == 2 else { return }
            heldUntilLastPage.set(lastPageArrived.wait(timeout: 10) { $0 })
        }
        let b = try TestNode("b", configuration: configuration)
        try a.allow(b)
        let first = try a.add("changes twice", image: jpeg(1))
        let others = try (0..<4_500).map { try a.add("item \($0)") }
        try Sync.pull(b, from: a)
        try a.setImage(first.key, jpeg(2))
        for item in others { _ = try a.store.edit(item.key, ItemEdit(valueInDollars: 7)) }
        // The key's new image comes on page 1 of 5. Page 1's records without new images commit
        // ahead of its images; the next batch (the key with that image fetched, and the pages
        // up to the session's tail) commits only once the last page is in. The image goes back
        // to the old one when page 2 arrives, so the key comes again on the last page, while
        // that batch is in flight and the key's committed row still names the old image.
        armed.set(true)
        defer { armed.set(false) }
        var options = SyncPlan()
        options.commitEvery = 4_000
        let (report, changedBack) = try Self.pull(
            b, from: a, options: options, onPage: 2, lastPageArrived: lastPageArrived
        ) {
            try a.setImage(first.key, jpeg(1))
        }
        #expect(changedBack)
        #expect(applies.current >= 2, "the held commit happened")
        #expect(heldUntilLastPage.current, "the batch holding the key committed before the last page arrived")
        #expect(report.manifestEntries == 4_502)
        #expect(try b.snapshot() == a.snapshot())
        #expect(b.imageBytes(first.key).map { SHA256.hash($0) } == SHA256.hash(jpeg(1)))
        #expect(try b.store.verify(repair: false).isClean)
    }

    /// Pulls `a` into `b` over a pipe and runs `change` (once) when manifest page `onPage` arrives;
    /// sets `lastPageArrived` when the final page does.
    static func pull(
        _ b: TestNode, from a: TestNode, options: SyncPlan = .init(), onPage: Int,
        lastPageArrived: Locked<Bool>? = nil, change: @escaping () throws -> Void
    ) throws -> (SyncReport, changed: Bool) {
        var changed = false
        let report = try Sync.session(b, a, .pipe) { channel in
            var pages = 0
            let hooked = ObservingChannel(channel) { frame in
                guard case .message(.manifestPage(let page)) = frame else { return }
                if page.isFinal { lastPageArrived?.set(true) }
                pages += 1
                if pages == onPage && !changed {
                    changed = true
                    try change()
                }
            }
            return try SyncClient(store: b.store, logger: quietLogger).pull(
                over: hooked, serverNodeID: a.nodeID, peerName: "a", plan: options)
        } wrap: {
            $0
        }
        return (report, changed)
    }
}

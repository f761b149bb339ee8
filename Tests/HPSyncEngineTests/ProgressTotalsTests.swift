import Foundation
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Synchronization
import Testing

@testable import HPSyncEngine

/// What the progress line counts while a session runs: items before their batch commits, and the
/// image bytes the session will move (issue 16).
@Suite struct ProgressTotalsTests {
    /// `image_bytes_ahead` on the first page only: the live entries' images after the start
    /// point, not those deleted since, nor those the previous pull already listed.
    @Test func theFirstPageAnnouncesTheImageBytesAhead() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try a.add("kept", image: jpeg(1, size: 5000))
        try a.add("also kept", image: jpeg(2, size: 7000))
        let gone = try a.add("deleted", image: jpeg(3, size: 4000))
        _ = try a.store.delete([gone.key])
        #expect(try pagesAnnounced(b, from: a) == [12_000])

        try a.add("new", image: jpeg(4, size: 3000))
        for i in 0..<1_000 { try a.add("plain \(i)") }
        let pages = try pagesAnnounced(b, from: a)
        #expect(pages == [3000, 0], "two pages, only the first announces; only what follows the checkpoint")
    }

    /// Before: the line said "0 items" until the batch (10,000 entries or 64 MiB of images)
    /// committed; the summary still counts only what was committed.
    @Test func aPullCountsItemsBeforeTheirBatchCommits() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<1_500 { try a.add("item \(i)") }
        let seen = Mutex<[SyncProgress]>([])
        var options = SyncPlan()
        options.progress = { progress in seen.withLock { $0.append(progress) } }
        let report = try Sync.session(b, a, .pipe) { channel in
            try SyncClient(store: b.store, logger: quietLogger).pull(
                over: channel, serverNodeID: a.nodeID, peerName: "a", plan: options)
        } wrap: {
            $0
        }
        let updates = seen.withLock { $0 }
        #expect(updates.map(\.items) == [1_000, 1_500], "the first page is received and checked, not yet committed")
        #expect(report.inserted.count == 1_500)
    }

    /// The `image_bytes_ahead` of each manifest page of one pull of `a` into `b`.
    func pagesAnnounced(_ b: TestNode, from a: TestNode) throws -> [Int64] {
        var announced: [Int64] = []
        _ = try Sync.session(b, a, .pipe) { channel in
            let hooked = ObservingChannel(channel) { frame in
                if case .message(.manifestPage(let page)) = frame { announced.append(page.imageBytesAhead) }
            }
            return try SyncClient(store: b.store, logger: quietLogger).pull(
                over: hooked, serverNodeID: a.nodeID, peerName: "a", plan: .init())
        } wrap: {
            $0
        }
        return announced
    }
}

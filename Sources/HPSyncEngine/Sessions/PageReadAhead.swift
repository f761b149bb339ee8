import Foundation
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Synchronization

/// Reads a source's next manifest page, and the records of its live entries (one pass over the
/// feed, `Store.feedPage`), on another thread
/// while the sink works on the current page, so that on two cores source and sink overlap
/// instead of taking turns.
///
/// A page read ahead is the change feed as it was at that moment, which is all a page ever is:
/// what changes later comes with a higher seq on a later page or in the next session. The records
/// read with it carry exactly the entries' versions, which is what a sink asks for.
final class PageReadAhead: Sendable {
    struct Page: Sendable {
        var page: ManifestPage
        var records: [ItemKey: Item]
        /// What the feed holds from the page's start on, read with it (when asked for).
        var counts: FeedCounts?
    }

    private struct Outstanding: Sendable {
        var after: Int64
        var result: Result<Page, any Error>?
    }

    private let store: Store
    private let pageSize: Int
    private let state = Mutex<Outstanding?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    init(store: Store, pageSize: Int = ProtocolLimits.manifestPageSize) {
        self.store = store
        self.pageSize = pageSize
    }

    /// Reads the page after `cursor` (and its records) on another thread.
    func start(after cursor: Int64) {
        state.withLock { $0 = Outstanding(after: cursor, result: nil) }
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let result = Result { try Self.read(store, after: cursor, pageSize: pageSize) }
            state.withLock { $0?.result = result }
            ready.signal()
        }
    }

    /// The page after `cursor`: the one read ahead when it was started for this cursor (waiting
    /// for it if need be), else read now; with `counting`, read now with the feed's counts from
    /// `cursor` on, in the same snapshot (a session's first page announces them).
    func page(after cursor: Int64, counting: Bool = false) throws -> Page {
        if let outstanding = collect(), outstanding.after == cursor, let result = outstanding.result, !counting {
            return try result.get()
        }
        return try Self.read(store, after: cursor, pageSize: pageSize, counting: counting)
    }

    /// Waits for a read still running, so that nothing touches the store after the session.
    func finish() {
        _ = collect()
    }

    /// Waits for the outstanding read, if any, and takes it.
    private func collect() -> Outstanding? {
        guard state.withLock({ $0 != nil }) else { return nil }
        ready.wait()
        return state.withLock { outstanding in
            defer { outstanding = nil }
            return outstanding
        }
    }

    static func read(_ store: Store, after cursor: Int64, pageSize: Int, counting: Bool = false) throws -> Page {
        let feed = try store.feedPage(after: cursor, limit: pageSize, counting: counting)
        let changes = feed.entries
        let isFinal = changes.count < pageSize
        let through = isFinal ? Swift.max(cursor, feed.lastSeq, changes.last?.seq ?? cursor) : changes.last!.seq
        return Page(
            page: ManifestPage(entries: changes, throughSeq: through, isFinal: isFinal), records: feed.records,
            counts: feed.counts)
    }
}

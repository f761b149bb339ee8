import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Logging

/// Offers the local store's changes to a sink: pages of the change feed in ascending seq, then
/// the records and image bytes the sink asks for, until the sink has applied the final page.
final class SourceSession {
    private let channel: any MessageChannel
    private let store: Store
    private let logger: Logger
    private let shouldStop: @Sendable () -> Bool
    private let version: UInt32
    private var machine: SourceStateMachine
    private let testHooks: EngineTestHooks
    private let images: ImageSender

    init(
        channel: any MessageChannel, store: Store, version: UInt32, logger: Logger,
        shouldStop: @escaping @Sendable () -> Bool = { false }, testHooks: EngineTestHooks = EngineTestHooks()
    ) {
        self.testHooks = testHooks
        self.version = version
        self.machine = SourceStateMachine(version: version)
        self.channel = channel
        self.store = store
        self.logger = logger
        self.shouldStop = shouldStop
        self.images = ImageSender(channel: channel, store: store, logger: logger)
    }

    /// Restamps the store's joined items (`Store.restampJoinedItems`) when the sink is older
    /// than field merge, so that no record it receives shows, at a version, other contents than
    /// that version's edit made (Protocol.md 5.9 "Older peers"). Called before the listing
    /// starts, so the restamped versions are in the feed the session reads; not for a dry run,
    /// which changes nothing here.
    static func restampJoinedItems(forSinkOf version: UInt32, store: Store, dryRun: Bool, logger: Logger) throws {
        guard version < ProtocolLimits.fieldMergeVersion, !dryRun else { return }
        let keys = try store.restampJoinedItems()
        guard !keys.isEmpty else { return }
        logger.debug(
            "restamped joined items for a version-\(version) sink", metadata: ["count": "\(keys.count)"])
    }

    /// What one PageDone of the sink says.
    struct Acknowledgement {
        /// Set when the sink has durably applied pages through it that it had not confirmed before.
        var durableSeq: Int64?
        var counts: ChangeCounts
        /// Version 3: the first entry of the session the sink did not apply; nil for none.
        var firstHeldSeq: Int64?
        /// Version 3: the entries of the page the sink refused.
        var refusals: [PageRefusal]
        /// Whether this source could not send an image it was asked for (its file is missing),
        /// so the sink withholds that record.
        var withheldHere = false
    }

    /// Sends pages from `start` (which must not be `.needsReconciliation`); `pageDone` runs on
    /// each of the sink's PageDone.
    func run(
        from start: ListingStart, into report: inout SyncReport, pageDone: (Acknowledgement) throws -> Void
    ) throws {
        var cursor = start.since
        var first = true
        let horizon = try store.gcHorizon()
        report.reconcileHorizon = start.horizon.map { Int64($0.milliseconds) }
        let readAhead = PageReadAhead(store: store, pageSize: testHooks.pageSize)
        defer { readAhead.finish() }
        while true {
            if shouldStop() {
                let stop = PeerErrorMessage(
                    code: .shuttingDown, message: "the server is shutting down; sync again later")
                try? channel.send(.error(stop))
                throw ServerRefusal(error: stop)
            }
            let next = try readAhead.page(after: cursor, counting: first && version >= 2)
            // After the read: a collection that finished before it is seen here.
            try checkNoCollection(since: horizon, cursor: cursor)
            var page = next.page
            page.reconcileHorizon = start.horizon
            if !mergesFields {
                for index in page.entries.indices { page.entries[index].mergeDigest = 0 }
            }
            if let counts = next.counts {
                (page.entriesAhead, page.tombstonesAhead, page.imageBytesAhead) =
                    (counts.entries, counts.tombstones, counts.imageBytes)
                if let announcing = testHooks.announcing { page.tombstonesAhead = announcing(page.tombstonesAhead) }
            }
            first = false
            try channel.send(.manifestPage(page))
            machine.sent(page)
            report.manifestEntries += page.entries.count
            if !page.isFinal { readAhead.start(after: page.throughSeq) }
            pageLoop: while true {
                let message = try channel.receiveMessage(expecting: "FetchRecords, FetchImages or PageDone")
                switch try machine.received(message) {
                case .sendRecords(let keys):
                    var records = try records(keys, readWith: next.records)
                    if !mergesFields {
                        for index in records.indices { records[index].mergeFields = nil }
                    }
                    try channel.send(.records(records))
                    report.recordsTransferred += records.count
                case .sendImages(let wanted):
                    for image in wanted { try send(image, report: &report) }
                case .sendNextPage(let through, let durable, let counts):
                    try pageDone(acknowledgement(durable, counts, report: report))
                    cursor = through
                    break pageLoop
                case .finished(let counts):
                    try pageDone(acknowledgement(page.throughSeq, counts, report: report))
                    return
                case .peerError(let error):
                    throw SyncError.refusedByPeer(error)
                }
            }
        }
    }

    /// Whether the sink merges fields (Protocol.md 5.9). An older sink's session is exactly its
    /// version's (section 9): manifest entries without merge digests, and each item as a whole
    /// record, its fields' winners at its version, or a tombstone without fields.
    private var mergesFields: Bool { version >= ProtocolLimits.fieldMergeVersion }

    private func acknowledgement(_ durable: Int64?, _ counts: ChangeCounts, report: SyncReport) -> Acknowledgement {
        Acknowledgement(
            durableSeq: durable, counts: counts, firstHeldSeq: machine.firstHeldSeq, refusals: machine.refusals,
            withheldHere: !report.withheld.isEmpty)
    }

    /// A `gc` (another process) that dropped tombstones not yet listed would make the sink miss
    /// those deletions: end the session, so the next one starts where the new horizon says.
    private func checkNoCollection(since horizon: GCHorizon, cursor: Int64) throws {
        let now = try store.gcHorizon()
        guard now != horizon, now.seq > cursor else { return }
        let stop = PeerErrorMessage(
            code: .internalError, message: "tombstones were garbage-collected during the session; sync again")
        try? channel.send(.error(stop))
        throw ServerRefusal(error: stop)
    }

    /// The records of `keys`: those read with the page, the rest (tombstones, which a sink may
    /// ask for too) from the store.
    private func records(_ keys: [ItemKey], readWith page: [ItemKey: Item]) throws -> [Item] {
        let missing = keys.filter { page[$0] == nil }
        guard !missing.isEmpty else { return keys.map { page[$0]! } }
        var found = page
        for item in try store.records(missing) { found[item.key] = item }
        return keys.compactMap { found[$0] }
    }

    /// Sends an ImageHeader and the image's bytes (or `missing` when this store cannot supply
    /// them intact).
    private func send(_ wanted: ImageWanted, report: inout SyncReport) throws {
        guard try images.send(wanted, report: &report) else {
            // The sink withholds the record; a later session offers it again once the file is back.
            report.withheld.append(
                SyncReport.Refusal(
                    key: wanted.key.rawValue,
                    reason: "its image file (SHA-256 \(wanted.digest)) is missing or damaged here; restore it with "
                        + "`hp-sync verify --repair --from PEER` or `hp-sync image set \(wanted.key) FILE`, then sync again"
                ))
            return
        }
    }
}

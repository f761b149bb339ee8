import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// The change set of one session, as the command prints it and `--json` reports it.
///
/// Counts are exact; of the keys behind them the report keeps the first
/// `CappedList.defaultLimit` per kind, so that its size does not grow with the store.
public struct SyncReport: Sendable {
    public typealias Direction = SyncDirection

    public struct Refusal: Sendable, Codable, Equatable {
        public var key: String
        public var reason: String

        public init(key: String, reason: String) {
            self.key = key
            self.reason = reason
        }
    }

    public var direction: Direction
    public var peer: String
    public var dryRun = false
    public var inserted = CappedList<String>()
    public var updated = CappedList<String>()
    public var deleted = CappedList<String>()
    public var tombstonesRecorded = 0
    public var skipped = 0
    /// Pull: what this node refused (its clock guard). Push: what the server refused (version 3
    /// lists the keys; an older server only counts them).
    public var refused = CappedList<Refusal>()
    /// Records not applied because their image could not be had: in a pull, the source said it
    /// is missing; in a push, this node's own file is missing. A later session offers them again.
    public var withheld = CappedList<Refusal>()
    public var manifestEntries = 0
    public var recordsTransferred = 0
    public var imagesTransferred = 0
    public var imageBytes: Int64 = 0
    public var bytesSent: Int64 = 0
    public var bytesReceived: Int64 = 0
    public var seconds = 0.0
    /// What the other side counted (the server's Done for pull, its PageDones for push).
    public var peerCounts = ChangeCounts()
    /// Set when the session was a full reconciliation: the source's GC horizon (milliseconds
    /// since 1970). Deletions older than it were discarded at the source.
    public var reconcileHorizon: Int64?
    /// The part of `deleted` that the reconciliation deleted: live here, no longer at the source.
    public var reconciled = CappedList<String>()
    /// Set when the peer's Hello showed its clock further from ours than the allowed skew.
    public var clockSkew: ClockSkew?
    /// Version 3: items whose missing or damaged image was fetched again by digest.
    public var healed = CappedList<String>()
    /// Version 3: items whose image the peer could not supply either.
    public var unhealed = CappedList<String>()

    public init(direction: Direction, peer: String) {
        self.direction = direction
        self.peer = peer
    }

    /// The counts a sink reports in PageDone.
    var counts: ChangeCounts {
        var counts = ChangeCounts()
        counts.inserted = inserted.count
        counts.updated = updated.count
        counts.deleted = deleted.count
        counts.tombstones = tombstonesRecorded
        counts.skipped = skipped
        counts.refused = refused.count
        counts.images = imagesTransferred
        counts.imageBytes = imageBytes
        counts.entries = manifestEntries
        counts.records = recordsTransferred
        return counts
    }
}

extension SyncReport: Encodable {
    enum CodingKeys: String, CodingKey {
        case direction, peer, dryRun, inserted, insertedCount, updated, updatedCount, deleted, deletedCount
        case tombstonesRecorded, skipped, refused, refusedCount, withheld, withheldCount, manifestEntries
        case recordsTransferred
        case imagesTransferred, imageBytes, bytesSent, bytesReceived, seconds, peerCounts, reconcileHorizon
        case reconciled, reconciledCount, clockWarning, healed, healedCount, unhealed, unhealedCount
    }

    /// Each list as the array of the keys it kept, next to its exact count (`insertedCount`...).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(direction, forKey: .direction)
        try container.encode(peer, forKey: .peer)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(inserted.kept, forKey: .inserted)
        try container.encode(inserted.count, forKey: .insertedCount)
        try container.encode(updated.kept, forKey: .updated)
        try container.encode(updated.count, forKey: .updatedCount)
        try container.encode(deleted.kept, forKey: .deleted)
        try container.encode(deleted.count, forKey: .deletedCount)
        try container.encode(tombstonesRecorded, forKey: .tombstonesRecorded)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(refused.kept, forKey: .refused)
        try container.encode(refused.count, forKey: .refusedCount)
        try container.encode(withheld.kept, forKey: .withheld)
        try container.encode(withheld.count, forKey: .withheldCount)
        try container.encode(manifestEntries, forKey: .manifestEntries)
        try container.encode(recordsTransferred, forKey: .recordsTransferred)
        try container.encode(imagesTransferred, forKey: .imagesTransferred)
        try container.encode(imageBytes, forKey: .imageBytes)
        try container.encode(bytesSent, forKey: .bytesSent)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(peerCounts, forKey: .peerCounts)
        try container.encodeIfPresent(reconcileHorizon, forKey: .reconcileHorizon)
        try container.encode(reconciled.kept, forKey: .reconciled)
        try container.encode(reconciled.count, forKey: .reconciledCount)
        try container.encodeIfPresent(clockSkew?.warning(), forKey: .clockWarning)
        try container.encode(healed.kept, forKey: .healed)
        try container.encode(healed.count, forKey: .healedCount)
        try container.encode(unhealed.kept, forKey: .unhealed)
        try container.encode(unhealed.count, forKey: .unhealedCount)
    }
}

/// The first elements of a list that may grow to millions, and exactly how many there were.
///
/// A report keeps the keys a session changed so that a person or a script can see which ones;
/// a million-item pull would otherwise hold a million keys (about 100 MB) only to print a count.
public struct CappedList<Element: Sendable>: Sendable {
    /// How many elements a list keeps unless told otherwise.
    public static var defaultLimit: Int { 1_000 }

    /// How many elements are kept at most.
    public let limit: Int
    /// How many elements were appended, kept or not.
    public private(set) var count = 0
    /// The first `limit` elements appended, in order.
    public private(set) var kept: [Element] = []
    /// How many of the elements were only counted (`countUnlisted`): a peer gave no identity.
    public private(set) var unlisted = 0

    public init(limit: Int = defaultLimit) {
        precondition(limit >= 0, "a list cannot keep a negative number of elements")
        self.limit = limit
    }

    public init(_ elements: some Collection<Element>, limit: Int = defaultLimit) {
        self.init(limit: limit)
        append(contentsOf: elements)
    }

    public var isEmpty: Bool { count == 0 }

    /// How many elements were counted but not kept.
    public var omitted: Int { count - kept.count }

    /// How many elements were known but not kept, the list being full.
    public var cut: Int { omitted - unlisted }

    public mutating func append(_ element: Element) {
        count += 1
        if kept.count < limit { kept.append(element) }
    }

    public mutating func append(contentsOf elements: some Collection<Element>) {
        count += elements.count
        let room = limit - kept.count
        if room > 0 { kept.append(contentsOf: elements.prefix(room)) }
    }

    /// Counts `count` elements whose identity is not known (a peer reported only a number).
    public mutating func countUnlisted(_ count: Int) {
        self.count += max(0, count)
        unlisted += max(0, count)
    }

    public static func += (list: inout CappedList, elements: some Collection<Element>) {
        list.append(contentsOf: elements)
    }
}

extension CappedList: Equatable where Element: Equatable {}

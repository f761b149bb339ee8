import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore

/// The change set of one session, as the command prints it and `--json` reports it.
public struct SyncReport: Sendable, Codable {
    public typealias Direction = SyncDirection

    public struct Refusal: Sendable, Codable, Equatable {
        public var key: String
        public var reason: String
    }

    public var direction: Direction
    public var peer: String
    public var dryRun = false
    public var inserted: [String] = []
    public var updated: [String] = []
    public var deleted: [String] = []
    public var tombstonesRecorded = 0
    public var skipped = 0
    public var refused: [Refusal] = []
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
    public var reconciled: [String] = []

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

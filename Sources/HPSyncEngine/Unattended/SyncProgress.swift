import HPSyncProtocol

/// How far a session has come, reported after each manifest page and each image.
///
/// A push knows its total (the local change feed after the push checkpoint), and so does a pull
/// from a version-2 server (its first page says how many entries follow), so both have an ETA
/// by entries; a pull from a version-1 server has only counts and a rate.
public struct SyncProgress: Sendable, Equatable {
    public var direction: SyncReport.Direction
    /// Manifest entries seen so far.
    public var entries = 0
    /// Items inserted, updated or deleted so far.
    public var items = 0
    public var images = 0
    /// Bytes of those images: the figure the summary line shows at the end.
    public var imageBytes: Int64 = 0
    /// Bytes that crossed the connection so far, both ways.
    public var bytes: Int64 = 0
    /// How many manifest entries the whole session holds, when known; nil otherwise.
    public var totalEntries: Int?

    public init(direction: SyncReport.Direction) {
        self.direction = direction
    }

    init(_ report: SyncReport, bytes: Int64, totalEntries: Int?) {
        self.totalEntries = totalEntries
        direction = report.direction
        entries = report.manifestEntries
        items = report.inserted.count + report.updated.count + report.deleted.count
        images = report.imagesTransferred
        imageBytes = report.imageBytes
        self.bytes = bytes
    }

    /// A push's progress, from what the server counted so far.
    init(pushed counts: ChangeCounts, bytes: Int64, totalEntries: Int?) {
        direction = .push
        entries = counts.entries
        items = counts.inserted + counts.updated + counts.deleted
        images = counts.images
        imageBytes = counts.imageBytes
        self.bytes = bytes
        self.totalEntries = totalEntries
    }

    /// Seconds until the last entry at the entry rate so far, or nil when that cannot be known:
    /// no total, no entry done yet, or under a second of history to take a rate from.
    public func secondsLeft(elapsed seconds: Double) -> Double? {
        guard let totalEntries, entries > 0, seconds >= 1 else { return nil }
        return Double(max(totalEntries - entries, 0)) * seconds / Double(entries)
    }
}

/// Called from the session's thread; keep it quick (it runs between frames).
public typealias SyncProgressHandler = @Sendable (SyncProgress) -> Void

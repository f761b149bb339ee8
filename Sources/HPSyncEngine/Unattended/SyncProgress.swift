import HPSyncProtocol

/// How far a session has come, reported after each manifest page and each image.
///
/// A push knows its totals (the local change feed after the push checkpoint, and its images'
/// bytes), and so does a pull from a version-2 server (its first page says how many entries
/// follow, and a newer one how many image bytes), so both have an ETA; a pull from a version-1
/// server has only counts and a rate.
public struct SyncProgress: Sendable, Equatable {
    public var direction: SyncReport.Direction
    /// Manifest entries seen so far.
    public var entries = 0
    /// Items inserted, updated or deleted so far. A pull counts what it received and checked,
    /// committed or not (a batch commits every 10,000 entries or 64 MiB of images); the summary
    /// counts what was committed.
    public var items = 0
    public var images = 0
    /// Bytes of those images: the figure the summary line shows at the end.
    public var imageBytes: Int64 = 0
    /// Bytes that crossed the connection so far, both ways.
    public var bytes: Int64 = 0
    /// How many manifest entries the whole session holds, when known; nil otherwise.
    public var totalEntries: Int?
    /// The bytes of the images of the live entries the session lists, when known (an upper
    /// bound of `imageBytes` at the end: images the receiver already has do not cross); nil otherwise.
    public var totalImageBytes: Int64?

    public init(direction: SyncReport.Direction) {
        self.direction = direction
    }

    /// A pull's progress: `received` items checked so far, of which the report holds the committed.
    init(_ report: SyncReport, received: Int, bytes: Int64, totalEntries: Int?, totalImageBytes: Int64?) {
        self.totalEntries = totalEntries
        self.totalImageBytes = Self.known(totalImageBytes)
        direction = report.direction
        entries = report.manifestEntries
        items = max(report.inserted.count + report.updated.count + report.deleted.count, received)
        images = report.imagesTransferred
        imageBytes = report.imageBytes
        self.bytes = bytes
    }

    /// A push's progress, from what the server counted so far.
    init(pushed counts: ChangeCounts, bytes: Int64, totalEntries: Int?, totalImageBytes: Int64?) {
        direction = .push
        entries = counts.entries
        items = counts.inserted + counts.updated + counts.deleted
        images = counts.images
        imageBytes = counts.imageBytes
        self.bytes = bytes
        self.totalEntries = totalEntries
        self.totalImageBytes = Self.known(totalImageBytes)
    }

    /// Seconds until the end at the rate so far, or nil when that cannot be known: no total,
    /// nothing done yet, or under a second of history to take a rate from. It goes by the larger
    /// of the entries' and the image bytes' remaining fractions (once some image bytes crossed):
    /// a page lists a thousand entries at once, while its images may take most of the session.
    public func secondsLeft(elapsed seconds: Double) -> Double? {
        guard let totalEntries, entries > 0, seconds >= 1 else { return nil }
        // Remaining per done: the larger remaining fraction has the larger ratio.
        var ratio = Self.ratio(left: Int64(totalEntries - entries), done: Int64(entries))
        if let totalImageBytes, imageBytes > 0 {
            ratio = max(ratio, Self.ratio(left: totalImageBytes - imageBytes, done: imageBytes))
        }
        return ratio * seconds
    }

    /// 0 image bytes ahead says nothing worth showing: no images, or a source that does not count them.
    private static func known(_ total: Int64?) -> Int64? {
        total.flatMap { $0 > 0 ? $0 : nil }
    }

    private static func ratio(left: Int64, done: Int64) -> Double {
        Double(max(left, 0)) / Double(done)
    }
}

/// Called from the session's thread; keep it quick (it runs between frames).
public typealias SyncProgressHandler = @Sendable (SyncProgress) -> Void

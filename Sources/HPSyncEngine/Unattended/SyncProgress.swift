import HPSyncProtocol

/// How far a session has come, reported after each manifest page and each image.
///
/// The manifest does not announce its length, so there is no total of items; the image count
/// and bytes of the page being fetched are known, which is where the time goes.
public struct SyncProgress: Sendable, Equatable {
    public var direction: SyncReport.Direction
    /// Manifest entries seen so far.
    public var entries = 0
    /// Items inserted, updated or deleted so far.
    public var items = 0
    public var images = 0
    /// Bytes that crossed the connection so far, both ways.
    public var bytes: Int64 = 0

    public init(direction: SyncReport.Direction) {
        self.direction = direction
    }

    init(_ report: SyncReport, bytes: Int64) {
        direction = report.direction
        entries = report.manifestEntries
        items = report.inserted.count + report.updated.count + report.deleted.count
        images = report.imagesTransferred
        self.bytes = bytes
    }

    /// A push's progress, from what the server counted so far.
    init(pushed counts: ChangeCounts, bytes: Int64) {
        direction = .push
        entries = counts.entries
        items = counts.inserted + counts.updated + counts.deleted
        images = counts.images
        self.bytes = bytes
    }
}

/// Called from the session's thread; keep it quick (it runs between frames).
public typealias SyncProgressHandler = @Sendable (SyncProgress) -> Void

import CHPSyncSQLite
import Foundation
import HPSyncModel

/// Tunables of one opened store.
public struct StoreConfiguration: Sendable {
    /// The largest image accepted from any source.
    public var maxImageBytes: Int64
    /// How far ahead of the local clock a received stamp may be before it is refused.
    public var maxClockSkewMilliseconds: UInt64
    /// Orphan images and temporaries younger than this are left alone: another process may be
    /// writing them right now.
    public var sweepAgeSeconds: Double
    /// How long a writer waits for another process's transaction before giving up.
    public var busyTimeoutSeconds: Double
    /// The WAL pages after which a commit folds the WAL into the database (a checkpoint: each
    /// page written again, and an fsync of the database). SQLite's default is 1,000 (4 MiB);
    /// 4,096 (16 MiB) lets an hourly pull of a thousand edits (about 2,200 pages) commit without
    /// paying for a checkpoint each time: a later commit folds several pulls' pages at once,
    /// and pages they share are written once. Commits are durable in the WAL either way.
    public var walAutocheckpointPages: Int
    /// Failure injection points for tests (`@testable`); none in production. Fixed for the life
    /// of the opened store: a test that must crash only at one step arms its closure itself.
    var testHooks = TestHooks()

    public init(
        maxImageBytes: Int64 = ItemLimits.defaultMaxImageBytes,
        maxClockSkewMilliseconds: UInt64 = 10 * 60 * 1000,
        sweepAgeSeconds: Double = 15 * 60,
        busyTimeoutSeconds: Double = 5,
        walAutocheckpointPages: Int = 4096
    ) {
        self.maxImageBytes = maxImageBytes
        self.maxClockSkewMilliseconds = maxClockSkewMilliseconds
        self.sweepAgeSeconds = sweepAgeSeconds
        self.busyTimeoutSeconds = busyTimeoutSeconds
        self.walAutocheckpointPages = walAutocheckpointPages
    }
}

/// The wall clock the hybrid logical clock reads; tests inject one they can set back.
public protocol WallClock: Sendable {
    func nowMilliseconds() -> UInt64
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
    public init() {}

    public func nowMilliseconds() -> UInt64 {
        let seconds = Date().timeIntervalSince1970
        return seconds > 0 ? UInt64(seconds * 1000) : 0
    }
}

/// Failure injection points, used by tests to simulate a crash between the steps of a write.
struct TestHooks: Sendable {
    /// Runs after an image's temporary file is written and before the row is committed.
    var afterTempWritten: (@Sendable () throws -> Void)?
    /// Runs after the row and the journal entry are committed, before the file is renamed.
    var afterCommitBeforeFinalize: (@Sendable () throws -> Void)?
    /// Runs when a batch of remote records starts applying, before its transaction.
    var beforeApply: (@Sendable () throws -> Void)?
}

/// Thrown by test hooks to simulate a process that died at that point.
struct SimulatedCrash: Error {}

/// The SQLite library this process runs with (for `hp-sync --version` and bug reports).
package enum SQLiteVersion {
    /// "3.46.1": the library loaded at run time.
    package static var runtime: String { String(cString: sqlite3_libversion()) }
}

import Foundation
import HPSyncEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-line progress display on stderr, redrawn in place at most five times a second.
///
/// Made only when stderr is a terminal, so cron mail, pipes and log files never see it.
/// The manifest has no announced length, so it shows items, images, bytes and the rate, not an ETA.
final class ProgressLine: @unchecked Sendable {
    private let peer: String
    private let lock = NSLock()
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false

    private init(peer: String) { self.peer = peer }

    /// A progress line when stderr is a terminal, else nil.
    static func onTerminal(peer: String) -> ProgressLine? {
        isatty(STDERR_FILENO) == 1 ? ProgressLine(peer: peer) : nil
    }

    func update(_ progress: SyncProgress) {
        lock.withLock {
            let now = ContinuousClock.now
            if let lastDrawn, now - lastDrawn < .milliseconds(200) { return }
            lastDrawn = now
            drawn = true
            let seconds = max((now - started).seconds, 0.001)
            let verb = progress.direction == .pull ? "pulling from" : "pushing to"
            let rate = SyncReportPrinter.formatBytes(Int64(Double(progress.bytes) / seconds))
            let line =
                "\(verb) \(peer): \(progress.entries) entries, \(progress.items) items, \(progress.images) images, "
                + "\(SyncReportPrinter.formatBytes(progress.bytes)) at \(rate)/s, \(Int(seconds)) s"
            FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        }
    }

    /// Erases the line so results and errors start on a clean line.
    func finish() {
        lock.withLock {
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            drawn = false
            lastDrawn = nil
        }
    }
}

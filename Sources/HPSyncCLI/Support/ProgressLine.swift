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
/// It shows entries, items, images with their bytes (the summary's figure, of the announced total
/// when known) and the rate; an ETA only when the total is known (a push, or a pull from a
/// version-2 server), by entries or by image bytes, whichever has more left.
final class ProgressLine: @unchecked Sendable {
    private let peer: String
    private let lock = NSLock()
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false

    private init(peer: String) { self.peer = peer }

    /// A progress line when stderr is a terminal that can redraw a line, else nil (`TERM=dumb`,
    /// as Emacs shells and some CI logs set it, cannot: every redraw would be a new line).
    static func onTerminal(
        peer: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> ProgressLine? {
        guard isatty(STDERR_FILENO) == 1, environment["TERM"] != "dumb" else { return nil }
        return ProgressLine(peer: peer)
    }

    /// The terminal's width in columns: the window's size, else `$COLUMNS`, else 80.
    static func terminalWidth(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
        return 80
    }

    /// `line` cut to fit in `width` columns, less one: a line that fills the last column makes
    /// some terminals wrap, and the next redraw would start a new line.
    static func fit(_ line: String, width: Int) -> String {
        let room = max(width - 1, 10)
        guard TerminalText.width(line) > room else { return line }
        var out = ""
        for character in line {
            if TerminalText.width(out + String(character)) > room - 1 { break }
            out.append(character)
        }
        return out + "…"
    }

    func update(_ progress: SyncProgress) {
        lock.withLock {
            let now = ContinuousClock.now
            if let lastDrawn, now - lastDrawn < .milliseconds(200) { return }
            lastDrawn = now
            drawn = true
            let line = Self.fit(
                Self.text(progress, peer: peer, elapsed: (now - started).seconds), width: Self.terminalWidth())
            FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        }
    }

    /// The line for `progress` after `elapsed` seconds, e.g. "pushing to nas: 500/2000 entries,
    /// 480 items, 12 images (2.9/48.3 MB), 310.0 KB/s, 10 s, ETA 30 s". The images' bytes are the
    /// figure the summary shows at the end (the total is at most what crosses: images the
    /// receiver has stay put); the rate is of everything that crossed the connection.
    static func text(_ progress: SyncProgress, peer: String, elapsed: Double) -> String {
        let seconds = max(elapsed, 0.001)
        let verb = progress.direction == .pull ? "pulling from" : "pushing to"
        let entries = progress.totalEntries.map { "\(progress.entries)/\($0)" } ?? "\(progress.entries)"
        let rate = SyncReportPrinter.formatBytes(Int64(Double(progress.bytes) / seconds))
        let imageBytes =
            progress.totalImageBytes.map { SyncReportPrinter.formatBytes(progress.imageBytes, of: $0) }
            ?? SyncReportPrinter.formatBytes(progress.imageBytes)
        var line =
            "\(verb) \(peer): \(entries) entries, \(progress.items) items, \(progress.images) images "
            + "(\(imageBytes)), \(rate)/s, \(Int(seconds)) s"
        if let left = progress.secondsLeft(elapsed: seconds) {
            // Every entry is listed but the session still runs (images of the last page, the
            // final commit): an "ETA 0 s" that lasts would be a wrong promise.
            line += left < 1 ? ", finishing" : ", ETA \(AgeText.describe(seconds: Int64(left.rounded(.up))))"
        }
        return line
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

import Foundation
import HPSyncEngine
import HPSyncModel
import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `pull`, `push` and `sync` show a session's change set.
enum SyncReportPrinter {
    /// One line: `pulled from nas: 12 inserted, 3 updated, 2 deleted, 5 images (18.4 MB) in 0.42 s`.
    static func summary(_ report: SyncReport, trash: Bool = true) -> String {
        let verb = report.direction == .pull ? "pulled from" : "pushed to"
        let prefix = report.dryRun ? "dry run, would have \(verb)" : verb
        // A push is applied (or previewed) by the server; its PageDone counts say what changed
        // or would change there.
        let (inserted, updated, deleted) =
            report.direction == .pull
            ? (report.inserted.count, report.updated.count, report.deleted.count)
            : (report.peerCounts.inserted, report.peerCounts.updated, report.peerCounts.deleted)
        let (images, bytes) = (report.imagesTransferred, report.imageBytes)
        var line =
            "\(prefix) \(report.peer): \(inserted) inserted, \(updated) updated, \(deleted) deleted, "
            + "\(images) image\(images == 1 ? "" : "s") (\(formatBytes(bytes))) in "
            + "\(DecimalText.format(report.seconds, places: 2)) s"
        if !report.refused.isEmpty { line += ", \(report.refused.count) refused" }
        if let note = reconciliation(report, trash: trash) { line += "\n" + note }
        return line
    }

    /// The note a full reconciliation deserves: the source discarded deletions, so what it no
    /// longer lists was deleted here (into the trash, when the pull keeps deleted versions).
    static func reconciliation(_ report: SyncReport, trash: Bool = true) -> String? {
        guard let horizon = report.reconcileHorizon else { return nil }
        let date = DateText.iso8601(milliseconds: horizon)
        if report.direction == .push {
            return "full reconciliation: this store discarded deletions older than \(date) that \(report.peer) "
                + "had not received; \(report.peer) deleted what it still had of them"
        }
        let count = report.reconciled.count
        let items = "\(count) local item\(count == 1 ? "" : "s") it no longer has"
        let fate =
            report.dryRun
            ? "would be deleted" : (trash ? "\(count == 1 ? "was" : "were") moved to the trash" : "deleted")
        return "full reconciliation: \(report.peer) discarded deletions older than \(date); \(items) \(fate)"
    }

    /// Keys per category, for --dry-run: those the report kept, then how many more there are.
    static func listing(_ report: SyncReport) -> String {
        var lines: [String] = []
        for (label, keys) in [("insert", report.inserted), ("update", report.updated), ("delete", report.deleted)] {
            lines += keys.kept.map { "\(label) \($0)" }
            if keys.omitted > 0 { lines.append("… and \(keys.omitted) more \(label)s") }
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    static func json(_ reports: [SyncReport]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = reports.count == 1 ? try encoder.encode(reports[0]) : try encoder.encode(reports)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func formatBytes(_ bytes: Int64) -> String {
        let (divisor, unit) = byteUnit(bytes)
        return divisor == 1 ? "\(bytes) B" : "\(DecimalText.format(Double(bytes) / divisor, places: 1)) \(unit)"
    }

    /// `bytes` of `total` in the total's unit, e.g. "12.0/48.3 MB".
    static func formatBytes(_ bytes: Int64, of total: Int64) -> String {
        let (divisor, unit) = byteUnit(total)
        guard divisor > 1 else { return "\(bytes)/\(total) B" }
        let part = DecimalText.format(Double(bytes) / divisor, places: 1)
        return "\(part)/\(DecimalText.format(Double(total) / divisor, places: 1)) \(unit)"
    }

    /// The decimal unit `bytes` is shown in, and its size.
    private static func byteUnit(_ bytes: Int64) -> (divisor: Double, unit: String) {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var divisor = 1.0
        var unit = 0
        while Double(bytes) / divisor >= 1000 && unit < units.count - 1 {
            divisor *= 1000
            unit += 1
        }
        return (divisor, units[unit])
    }

    /// Prints a session's outcome the way the flags ask.
    static func print(_ reports: [SyncReport], options: SyncCommandOptions) throws {
        for report in reports {
            if let skew = report.clockSkew { Output.warning(skew.warning()) }
            warnings(report).forEach(Output.warning)
        }
        // Deletions a reconciliation made are worth a line even in cron's --quiet runs.
        if options.quiet || options.json {
            for report in reports where !report.reconciled.isEmpty && !report.dryRun {
                if let note = reconciliation(report, trash: options.keepDeletedMilliseconds > 0) {
                    Output.warning(note)
                }
            }
        }
        if options.json {
            Output.writeJSON(try json(reports))
        } else if !options.quiet || options.dryRun {
            for report in reports {
                if report.dryRun { Output.write(listing(report)) }
                Output.write(summary(report, trash: options.keepDeletedMilliseconds > 0) + "\n")
                if !report.healed.isEmpty {
                    Output.write(
                        "fetched \(report.healed.count) missing or damaged image(s) again from \(report.peer)\n")
                }
            }
        }
        let refused = reports.reduce(0) { $0 + $1.refused.count }
        let withheld = reports.reduce(0) { $0 + $1.withheld.count }
        let unhealed = reports.reduce(0) { $0 + $1.unhealed.count }
        if refused + withheld + unhealed > 0 {
            throw CompletedWithWarnings(
                refused: refused, withheld: withheld, unhealed: unhealed, preview: reports.contains { $0.dryRun })
        }
    }

    /// One line per record a session did not apply: what this node refused in a pull, what the
    /// server refused in a push, and records withheld because an image is missing; and one per
    /// image the pull could not heal because the peer has no intact copy either.
    static func warnings(_ report: SyncReport) -> [String] {
        let refuser = report.direction == .push ? "\(report.peer) refused" : "refused"
        var lines = report.refused.kept.map { "\(refuser) \($0.key): \($0.reason)" }
        // Past the first 1,000 the report keeps only a count; an older server names none.
        if report.refused.cut > 0 {
            lines.append("… and \(report.refused.cut) more refused (not listed)")
        }
        if report.refused.unlisted > 0 {
            lines.append(
                "\(report.peer) refused \(report.refused.unlisted) more record(s) without naming them (its hp-sync "
                    + "is older); this node offers them again on the next push")
        }
        lines += report.withheld.kept.map { "withheld \($0.key): \($0.reason)" }
        if report.withheld.omitted > 0 { lines.append("… and \(report.withheld.omitted) more withheld") }
        // The item is here, its image is not, and this peer cannot help: only another peer can.
        lines += report.unhealed.kept.map {
            "image of \($0) is missing or damaged here and \(report.peer) could not supply it either; fetch it from "
                + "another peer: hp-sync verify --repair --from OTHER-PEER"
        }
        if report.unhealed.omitted > 0 {
            lines.append("… and \(report.unhealed.omitted) more image(s) \(report.peer) could not supply")
        }
        return lines
    }
}

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

/// A number with a fixed count of decimals ("12.3"), exactly as `String(format: "%.1f")` writes
/// it, without Foundation's formatting: its first use in a process (the formatter, and the Swift
/// runtime's conformance lookups for `CVarArg`) cost a pull's summary line about half a
/// millisecond (52 samples in six profiled incremental pulls of ~100 ms).
enum DecimalText {
    /// `value` rounded to `places` decimals (0 to 6) as printf rounds: the exact binary value to
    /// the nearest, a tie to the even neighbour; a negative value keeps its sign ("-0.0").
    static func format(_ value: Double, places: Int) -> String {
        precondition((0...6).contains(places), "0 to 6 decimals")
        // Beyond 1e9 the scaled value may pass 2^52, where the arithmetic below stops being exact.
        guard value.isFinite, abs(value) < 1e9 else { return String(format: "%.\(places)f", value) }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = abs(value)
        let scaled = magnitude * Double(scale)
        // magnitude × scale = scaled + residual, exactly (a fused multiply-add's one rounding).
        let residual = (-scaled).addingProduct(magnitude, Double(scale))
        let whole = scaled.rounded(.down)
        // Exact where it decides (a fraction of 0.25 or more), and then either 0 or a multiple of
        // scaled's ulp, larger than the residual: its sign is the sign of the true excess.
        let excess = (scaled - whole) - 0.5
        var units = Int64(whole)
        if excess > 0 || (excess == 0 && (residual > 0 || (residual == 0 && units % 2 == 1))) { units += 1 }
        let sign = value.sign == .minus ? "-" : ""
        guard places > 0 else { return "\(sign)\(units)" }
        let fraction = String(units % scale)
        return "\(sign)\(units / scale)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}

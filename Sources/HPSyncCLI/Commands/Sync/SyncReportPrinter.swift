import Foundation
import HPSyncEngine
import HPSyncModel
import HPSyncStore

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

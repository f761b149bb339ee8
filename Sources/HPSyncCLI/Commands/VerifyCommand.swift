import ArgumentParser
import HPSyncStore

/// `hp-sync verify [--repair]`: exits 0 only when the store is clean.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check the database and every image; exit 0 only when clean.")

    @OptionGroup var options: StoreOptions
    @Flag(help: "Finish interrupted image writes and remove orphan files.") var repair = false

    func run() throws {
        let store = try options.openStore()
        let report = try store.verify(repair: repair)
        var lines = report.repaired.map { "repaired: \($0)" }
        lines += report.problems.map { "problem: \($0)" }
        lines += report.warnings.map { "warning: \($0)" }
        lines += report.inFlight.map { "in flight (left alone): images/\($0)" }
        lines.append(
            "checked \(report.itemsChecked) items, \(report.imagesChecked) images: "
                + (report.isClean ? "clean" : "\(report.problems.count) problems"))
        Output.write(lines.joined(separator: "\n") + "\n")
        if !report.isClean { throw VerifyFoundProblems(count: report.problems.count) }
    }
}

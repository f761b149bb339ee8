import ArgumentParser
import HPSyncStore

/// `hp-sync verify [--repair]`: exits 0 only when the store is clean.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check the database and every image; exit 0 only when clean.")

    @OptionGroup var options: StoreOptions
    @Flag(help: "Finish interrupted image writes and remove orphan files.") var repair = false
    @Flag(help: "Print JSON (counts, problems, repairs) instead of lines.") var json = false
    @Flag(name: [.customShort("q"), .long], help: "Print nothing when the store is clean (for cron).") var quiet = false

    /// `--json`: the report; `problems` are the lines the text shows.
    struct Document: Encodable {
        var itemsChecked: Int
        var imagesChecked: Int
        var clean: Bool
        var problems: [String]
        var repaired: [String]
        var inFlight: [String]
    }

    func run() throws {
        let store = try options.openStore()
        let report = try store.verify(repair: repair)
        if json {
            try Output.json(
                Document(
                    itemsChecked: report.itemsChecked, imagesChecked: report.imagesChecked, clean: report.isClean,
                    problems: report.problems, repaired: report.repaired, inFlight: report.inFlight))
            if !report.isClean { throw VerifyFoundProblems(count: report.problems.count) }
            return
        }
        var lines = report.repaired.map { "repaired: \($0)" }
        lines += report.problems.map { "problem: \($0)" }
        lines += report.inFlight.map { "in flight (left alone): images/\($0)" }
        lines.append(
            "checked \(report.itemsChecked) items, \(report.imagesChecked) images: "
                + (report.isClean ? "clean" : "\(report.problems.count) problems"))
        if !(quiet && report.isClean && report.repaired.isEmpty) { Output.write(lines.joined(separator: "\n") + "\n") }
        if !report.isClean { throw VerifyFoundProblems(count: report.problems.count) }
    }
}

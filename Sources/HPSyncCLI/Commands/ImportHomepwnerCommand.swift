import ArgumentParser
import Foundation
import HPSyncStore
import HPSyncTransfer

/// `hp-sync import-homepwner DIR`: imports the Homepwner app's Documents folder as local changes.
struct ImportHomepwnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-homepwner",
        abstract: "Import a Homepwner app's Documents folder (idempotent: only real differences become edits).",
        discussion: """
            Reads items.archive (any edition), items.plist (LootLogger) and store.data or items.data \
            (Core Data), and each item's image file named by its key. The whole folder is checked \
            first: a malformed file imports nothing. Items deleted in this store stay deleted.
            """)

    @OptionGroup var options: StoreOptions
    @Argument(help: "The app's Documents folder.") var directory: String
    @Flag(name: [.customShort("n"), .long], help: "Report what would change without writing anything.")
    var dryRun = false
    @Option(help: "Core Data asset type label: 'name' appends it as 'Name [Label]', 'ignore' leaves it out.")
    var assetType: HomepwnerImportOptions.AssetType = .name

    func run() throws {
        let store = try options.openStore()
        let start = ContinuousClock.now
        let report = try store.importHomepwner(
            from: URL(fileURLWithPath: directory, isDirectory: true),
            options: HomepwnerImportOptions(assetType: assetType, dryRun: dryRun))
        var lines: [String] = []
        for source in report.sources {
            lines.append("read \(source.file): \(source.edition.rawValue), \(source.itemCount) items")
        }
        var summary = Output.summary(
            inserted: report.inserted.count, updated: report.updated.count, deleted: 0,
            imagesWritten: report.imagesWritten, imageBytes: report.imageBytes,
            milliseconds: Output.milliseconds(since: start))
        summary += ", unchanged \(report.unchanged.count)"
        if dryRun { summary = "dry run, nothing written: would have " + summary }
        lines.append(summary)
        if !report.skippedDeleted.isEmpty {
            lines.append("skipped \(report.skippedDeleted.count) items deleted in this store (left deleted)")
        }
        if !report.keysWithoutImage.isEmpty {
            lines.append("\(report.keysWithoutImage.count) items have no image file (any image in the store is kept)")
        }
        if report.assetTypeLabels > 0 {
            lines.append(
                report.assetType == .name
                    ? "\(report.assetTypeLabels) asset type labels appended to names as 'Name [Label]'"
                    : "\(report.assetTypeLabels) asset type labels left out (--asset-type ignore)")
        }
        Output.write(lines.joined(separator: "\n") + "\n")
    }
}

extension HomepwnerImportOptions.AssetType: ExpressibleByArgument {}

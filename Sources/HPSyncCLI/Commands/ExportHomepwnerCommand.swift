import ArgumentParser
import Foundation
import HPSyncStore

/// `hp-sync export-homepwner DIR`: writes the inventory as a Homepwner Documents folder.
struct ExportHomepwnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-homepwner",
        abstract: "Write the inventory as a Homepwner Documents folder the app can read.",
        discussion: """
            Writes items.archive (NSKeyedArchiver, --format archive) or items.plist (LootLogger, \
            --format plist) and each image as DIR/<KEY>. Other files in DIR are left alone.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case archive, plist }

    @OptionGroup var options: StoreOptions
    @Argument(help: "The folder to write (created if missing).") var directory: String
    @Option(help: "archive (items.archive) or plist (items.plist).") var format: Format = .archive
    @Option(
        name: .customLong("class"),
        help: "With --format archive: swift (Homepwner.Item) or objc (BNRItem, 32-bit values).")
    var archiveClass: HomepwnerArchive.Style = .swift

    func run() throws {
        let store = try options.openStore()
        let report = try store.exportHomepwner(
            to: URL(fileURLWithPath: directory, isDirectory: true),
            format: format == .plist ? .plist : .archive(archiveClass))
        Output.write(
            "wrote \(report.file.path): \(report.items) items, images \(report.images) (\(report.imageBytes) bytes)\n")
    }
}

extension HomepwnerArchive.Style: ExpressibleByArgument {}

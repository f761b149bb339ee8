import ArgumentParser
import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTransfer

/// `hp-sync export-homepwner DIR`: writes the inventory as a Homepwner Documents folder.
struct ExportHomepwnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-homepwner",
        abstract: "Write the inventory as a Homepwner Documents folder the app can read.",
        discussion: """
            Writes items.archive (NSKeyedArchiver, --format archive) or items.plist (LootLogger, \
            --format plist) and each image as DIR/<KEY>. The data file is written as \
            DIR/.hp-sync-export-<UUID> and renamed into place last. Other files in DIR are left alone.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case archive, plist }

    @OptionGroup var options: StoreOptions
    @Argument(help: "The folder to write (created if missing).") var directory: String
    @Option(help: "archive (items.archive) or plist (items.plist).") var format: Format = .archive
    @Option(
        name: .customLong("class"),
        help: "With --format archive: swift (Homepwner.Item) or objc (BNRItem, 32-bit values).")
    var archiveClass: HomepwnerArchive.Style = .swift
    @Flag(help: "Overwrite the data file and images already in DIR.") var force = false

    func run() throws {
        let store = try options.openStore()
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        if !force {
            // The data file, then each image file the export would replace with other bytes
            // (an image already there as it is, from an export in the other format, is no loss).
            try Output.checkOverwrite(
                folder.appendingPathComponent(format == .plist ? "items.plist" : "items.archive").path, force: false)
            for key in try store.liveImageKeys() {
                let target = folder.appendingPathComponent(key.rawValue)
                if (try? Data(contentsOf: target)) == (try? Data(contentsOf: store.imageFileURL(for: key))) {
                    continue
                }
                try Output.checkOverwrite(target.path, force: false)
            }
        }
        let report = try store.exportHomepwner(
            to: folder,
            format: format == .plist ? .plist : .archive(archiveClass))
        Output.write(
            "wrote \(report.file.path): \(report.items) items, images \(report.images) (\(report.imageBytes) bytes)\n")
    }
}

extension HomepwnerArchive.Style: ExpressibleByArgument {}

import ArgumentParser
import Foundation
import HPSyncStore
import HPSyncTransfer

/// `hp-sync import FILE`: applies an export by the merge rule and prints the change set.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import an export file (idempotent: newer versions win).")

    @OptionGroup var options: StoreOptions
    @Argument(help: "A file written by `hp-sync export` (JSON, or CSV from --format csv).") var file: String
    @Option(help: "The directory of images written by `export --images`.") var images: String?
    @Flag(name: [.customShort("n"), .long], help: "Show what would change and write nothing.") var dryRun = false

    func run() throws {
        let store = try options.openStore()
        let start = ContinuousClock.now
        let url = URL(fileURLWithPath: file)
        let imagesURL = images.map { URL(fileURLWithPath: $0, isDirectory: true) }
        if dryRun {
            let changes = try store.importPreview(from: url, csv: !Self.isJSON(url))
            Output.write(DryRun.report(changes))
            return
        }
        let changes =
            try Self.isJSON(url)
            ? try store.importJSON(from: url, imagesDirectory: imagesURL)
            : try store.importCSV(from: url, imagesDirectory: imagesURL)
        Output.write(Output.summary(changes, milliseconds: Output.milliseconds(since: start)) + "\n")
        let missing = changes.imagesMissing.count
        if missing > 0, let images {
            // With a directory, each image not taken is named: a damaged file, or one the export left out.
            let refused = Set(changes.imagesRefused.map(\.key))
            for image in changes.imagesRefused { Output.warning("\(image)") }
            for key in changes.imagesMissing where !refused.contains(key) {
                Output.warning(
                    "\(ImageLeftOut(key: key, reason: "not imported: the export left it out (no \(images)/\(key))"))")
            }
            throw CommandFailure(
                status: .completedWithWarnings,
                description: "\(missing) image\(missing == 1 ? " is" : "s are") missing (listed above), every record "
                    + "was imported; fetch \(missing == 1 ? "it" : "them") from a peer with `\(Store.repairCommand)`")
        }
        if missing > 0 {
            // Every record is in; only bytes are missing, and they can come back (exit 3, a warning).
            throw CommandFailure(
                status: .completedWithWarnings,
                description: "\(missing) image\(missing == 1 ? " is" : "s are") missing (the export has no images); "
                    + "import again with --images DIR, or fetch them from a peer with "
                    + "`hp-sync verify --repair --from PEER` (a pull from a version-3 peer fetches them too)")
        }
    }

    /// JSON exports start with `{`; anything else is read as CSV (a missing file is reported by
    /// the import itself).
    static func isJSON(_ url: URL) throws -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return true }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64)) ?? Data()
        return head.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) } == UInt8(ascii: "{")
    }
}

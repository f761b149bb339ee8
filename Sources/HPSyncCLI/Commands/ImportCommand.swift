import ArgumentParser
import Foundation
import HPSyncStore

/// `hp-sync import FILE`: applies an export by the merge rule and prints the change set.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import an export file (idempotent: newer versions win).")

    @OptionGroup var options: StoreOptions
    @Argument(help: "A file written by `hp-sync export`.") var file: String
    @Option(help: "The directory of images written by `export --images`.") var images: String?

    func run() throws {
        let store = try options.openStore()
        let start = ContinuousClock.now
        let changes = try store.importJSON(
            from: URL(fileURLWithPath: file),
            imagesDirectory: images.map { URL(fileURLWithPath: $0, isDirectory: true) })
        Output.write(Output.summary(changes, milliseconds: Output.milliseconds(since: start)) + "\n")
        let missing = changes.imagesMissing.count
        if missing > 0 {
            // Every record is in; only bytes are missing, and they can come back (exit 3, a warning).
            throw CommandFailure(
                status: .completedWithWarnings,
                description: "\(missing) image\(missing == 1 ? " is" : "s are") missing (the export has no images); "
                    + "import again with --images DIR, or fetch them from a peer with "
                    + "`hp-sync verify --repair --from PEER` (a pull from a version-3 peer fetches them too)")
        }
    }
}

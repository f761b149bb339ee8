import ArgumentParser
import Foundation
import HPSyncStore
import HPSyncTransfer

/// `hp-sync export`: the inventory as JSON (lossless) or CSV.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export items as JSON (lossless, re-importable) or CSV.")

    @OptionGroup var options: StoreOptions
    @Option(help: "json or csv.") var format: String = "json"
    @Option(name: .shortAndLong, help: "Output file (default: stdout).") var output: String?
    @Option(help: "Also copy each item's image to DIR/<KEY>.") var images: String?
    @Flag(help: "Overwrite the output file if it exists.") var force = false

    func validate() throws {
        guard ["json", "csv"].contains(format) else { throw ValidationError("--format must be json or csv") }
    }

    func run() throws {
        if let output { try Output.checkOverwrite(output, force: force, fileName: "inventory.\(format)") }
        let store = try options.openStore()
        let imagesURL = images.map { URL(fileURLWithPath: $0, isDirectory: true) }
        var leftOut: [ImageLeftOut] = []
        let data =
            format == "csv"
            ? try store.exportCSV(imagesDirectory: imagesURL, leftOut: &leftOut)
            : try store.exportJSON(imagesDirectory: imagesURL, leftOut: &leftOut)
        if let output { try Output.save(data, to: output) } else { Output.writeData(data) }
        // The export is complete but for these images (exit 3, as a sync that withheld records).
        for image in leftOut { Output.warning("\(image)") }
        if !leftOut.isEmpty {
            throw CommandFailure(
                status: .completedWithWarnings,
                description: "\(leftOut.count) image\(leftOut.count == 1 ? " was" : "s were") left out of the export "
                    + "(listed above); the records are all exported, and an import records \(leftOut.count == 1 ? "that image" : "those images") as missing"
            )
        }
    }
}

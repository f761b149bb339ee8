import ArgumentParser
import Foundation
import HPSyncStore

/// `hp-sync image get KEY [-o FILE]`: the raw bytes, to a file or stdout.
struct ImageGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Write an item's image to a file, or its raw bytes to stdout.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The item's key or a unique prefix.") var key: String
    @Option(name: .shortAndLong, help: "Output file (default: stdout).") var output: String?

    func run() throws {
        let store = try options.openStore()
        let resolved = try store.resolve(prefix: key)
        guard let item = try store.item(resolved), !item.deleted, item.image != nil else {
            throw CommandFailure(
                status: .noInput,
                description: "item \(resolved) has no image; set one with `hp-sync image set \(resolved) FILE`")
        }
        let source = store.imageFileURL(for: resolved)
        let data: Data
        do {
            data = try Data(contentsOf: source)
        } catch {
            throw StoreError.io(path: source.path, reason: error.localizedDescription)
        }
        if let output {
            try Output.save(data, to: output)
        } else {
            Output.writeData(data)
        }
    }
}

import ArgumentParser
import Foundation
import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `hp-sync image get KEY [-o FILE]`: the raw bytes, to a file or stdout.
struct ImageGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Write an item's image to a file, or its raw bytes to stdout.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The item's key or a unique prefix.") var key: String
    @Option(name: .shortAndLong, help: "Output file (default: stdout, which must not be a terminal).")
    var output: String?
    @Flag(help: "Overwrite the output file if it exists.") var force = false

    func run() throws {
        // As curl does: image bytes on a terminal are garbage at best and escape sequences at worst.
        if output == nil, isatty(STDOUT_FILENO) == 1 {
            throw CommandFailure(
                status: .usage, description: "stdout is a terminal; use -o FILE or redirect (> FILE)")
        }
        if let output { try Output.checkOverwrite(output, force: force) }
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

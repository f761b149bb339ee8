import ArgumentParser
import HPSyncStore
import HPSyncTransfer

/// `hp-sync show KEY`: one item's fields.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one item.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The item's key, or a unique prefix of at least 4 characters.") var key: String
    @Flag(help: "Print JSON (the export's item format).") var json = false

    func run() throws {
        let store = try options.openStore()
        let resolved = try store.resolve(prefix: key)
        guard let item = try store.item(resolved) else { throw StoreError.unknownKey(key) }
        let problem = store.imageFileProblem(item)
        if json { return Output.writeData(store.itemJSON(item, imageMissing: problem != nil)) }
        Output.write(Output.describe(item, imagePath: store.imageFileURL(for: resolved).path, imageProblem: problem))
    }
}

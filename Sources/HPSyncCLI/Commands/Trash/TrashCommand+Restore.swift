import ArgumentParser
import HPSyncStore

extension TrashCommand {
    /// `hp-sync trash restore KEY [--id N]`.
    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore", abstract: "Restore a trashed version as a new local edit (the newest, or --id).")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The item's key (or a unique prefix of 4+ characters).") var key: String
        @Option(help: "The trash entry to restore (see `hp-sync trash list KEY`).") var id: Int64?

        func run() throws {
            let store = try options.openStore()
            let itemKey = try TrashCommand.List.key(key, in: store)
            let item = try store.restoreFromTrash(key: itemKey, id: id)
            Output.write("restored \(item.key) (\(TerminalText.escaped(item.name))) as version \(item.version)\n")
        }
    }
}

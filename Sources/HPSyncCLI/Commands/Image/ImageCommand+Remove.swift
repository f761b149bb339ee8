import ArgumentParser
import HPSyncStore

extension ImageCommand {
    /// `hp-sync image rm KEY`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove an item's image.")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The item's key or a unique prefix.") var key: String

        func run() throws {
            let store = try options.openStore()
            let item = try store.removeImage(try store.resolve(prefix: key))
            Output.write("\(item.key): image removed\n")
        }
    }
}

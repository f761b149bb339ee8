import ArgumentParser
import HPSyncStore

/// `hp-sync rm KEY...`: deletes items in one transaction.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete items (all or none, in one transaction).")

    @OptionGroup var options: StoreOptions
    @Argument(help: "Keys or unique prefixes.") var keys: [String]

    func validate() throws {
        if keys.isEmpty { throw ValidationError("give at least one key to delete") }
    }

    func run() throws {
        let store = try options.openStore()
        let start = ContinuousClock.now
        let resolved = try keys.map { try store.resolve(prefix: $0) }
        let changes = try store.delete(resolved)
        Output.write(changes.deleted.map { "deleted \($0)\n" }.joined())
        Output.write(Output.summary(changes, milliseconds: Output.milliseconds(since: start)) + "\n")
    }
}

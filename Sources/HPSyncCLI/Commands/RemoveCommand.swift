import ArgumentParser
import HPSyncStore

/// `hp-sync rm KEY...`: deletes items in one transaction.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete items (all or none, in one transaction).")

    @OptionGroup var options: StoreOptions
    @Argument(help: "Keys or unique prefixes.") var keys: [String]
    @Flag(name: [.customShort("n"), .long], help: "Show what would be deleted and delete nothing.") var dryRun = false

    func validate() throws {
        if keys.isEmpty { throw ValidationError("give at least one key to delete") }
    }

    func run() throws {
        let store = try options.openStore()
        let start = ContinuousClock.now
        let resolved = try keys.map { try store.resolve(prefix: $0) }
        if dryRun {
            // The same checks as the deletion, so a dry run that passes predicts one that does.
            for key in resolved where try store.item(key)?.deleted ?? true { throw StoreError.unknownKey(key.rawValue) }
            let changes = ChangeSet(deleted: Array(Set(resolved)).sorted { $0.rawValue < $1.rawValue })
            Output.write(DryRun.report(changes))
            return
        }
        let changes = try store.delete(resolved)
        Output.write(changes.deleted.map { "deleted \($0)\n" }.joined())
        Output.write(Output.summary(changes, milliseconds: Output.milliseconds(since: start)) + "\n")
    }
}

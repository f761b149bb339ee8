import ArgumentParser
import HPSyncStore

extension TrashCommand {
    /// `hp-sync trash purge --older-than D | --all`.
    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge", abstract: "Delete trash entries for good (those older than --older-than, or --all).")

        @OptionGroup var options: StoreOptions
        @Option(help: ArgumentHelp("Only entries trashed longer ago than this (30d, 12h).", valueName: "duration"))
        var olderThan: Age?
        @Flag(help: "Every entry, however recent.") var all = false
        @Flag(name: [.customShort("n"), .long], help: "Show how many entries would go and delete nothing.")
        var dryRun = false

        func validate() throws {
            // The trash is the undo of a bad pull: emptying it takes saying so.
            if olderThan == nil && !all { throw ValidationError("say what to purge: --older-than DURATION or --all") }
            if olderThan != nil && all { throw ValidationError("give either --older-than or --all, not both") }
        }

        func run() throws {
            let store = try options.openStore()
            let age = olderThan?.milliseconds ?? -1
            if dryRun {
                let cutoff = Int64(store.nowMilliseconds()) - age
                let count = try store.trashEntries(key: nil).filter { $0.trashedAt <= cutoff }.count
                Output.write("dry run, nothing deleted: would purge \(count) trash entr\(count == 1 ? "y" : "ies")\n")
                return
            }
            let removed = try store.purgeTrash(olderThanMilliseconds: age)
            Output.write("purged \(removed) trash entr\(removed == 1 ? "y" : "ies")\n")
        }
    }
}

import ArgumentParser

/// `hp-sync sync PEER`: pull, then push, so both stores end up with the same inventory.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Pull from a peer, then push to it: both stores converge.")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        try SyncRunner.run(storeOptions: options, syncOptions: sync, pulls: true) { runner in
            let pulled = try runner.pull()
            let pushed = try runner.push()
            try runner.print([pulled, pushed])
        }
    }
}

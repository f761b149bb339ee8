import ArgumentParser

/// `hp-sync sync PEER`: pull, then push, so both stores end up with the same inventory.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Pull from a peer, then push to it: both stores converge.")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        let runner = try SyncRunner(storeOptions: options, syncOptions: sync)
        let pulled = try runner.pull(sync)
        let pushed = try runner.push(sync)
        try SyncReportPrinter.print([pulled, pushed], options: sync)
    }
}

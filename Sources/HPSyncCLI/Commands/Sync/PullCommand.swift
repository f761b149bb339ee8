import ArgumentParser

/// `hp-sync pull PEER`: receive the peer's changes.
struct PullCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull", abstract: "Receive a peer's changes (items, images, deletions) into this store.")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        let runner = try SyncRunner(storeOptions: options, syncOptions: sync)
        try SyncReportPrinter.print([try runner.pull(sync)], options: sync)
    }
}

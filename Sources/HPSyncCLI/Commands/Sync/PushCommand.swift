import ArgumentParser

/// `hp-sync push PEER`: send local changes to a peer that allows this node to write.
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Send this store's changes to a peer (needs read-write permission there).")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        let runner = try SyncRunner(storeOptions: options, syncOptions: sync)
        try SyncReportPrinter.print([try runner.push(sync)], options: sync)
    }
}

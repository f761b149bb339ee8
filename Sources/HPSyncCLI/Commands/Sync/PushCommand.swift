import ArgumentParser

/// `hp-sync push PEER`: send local changes to a peer that allows this node to write.
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Send this store's changes to a peer (needs read-write permission there).")

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        try SyncRunner.run(storeOptions: options, syncOptions: sync, pulls: false) { runner in
            try runner.print([try runner.push()])
        }
    }
}

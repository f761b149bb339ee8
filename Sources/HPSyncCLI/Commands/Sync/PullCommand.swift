import ArgumentParser

/// `hp-sync pull PEER`: receive the peer's changes.
struct PullCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull", abstract: "Receive a peer's changes (items, images, deletions) into this store.",
        discussion: """
            Only one pull, push or sync runs per store at a time; another exits at once with code 79. \
            A pull that would delete most of this store is refused with code 80 before anything is \
            applied. See `hp-sync exit-codes`.
            """)

    @OptionGroup var options: StoreOptions
    @OptionGroup var sync: SyncCommandOptions

    func run() throws {
        try SyncRunner.run(storeOptions: options, syncOptions: sync, pulls: true) { runner in
            try runner.print([try runner.pull()])
        }
    }
}

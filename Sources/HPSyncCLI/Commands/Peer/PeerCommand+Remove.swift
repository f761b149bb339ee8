import ArgumentParser
import HPSyncStore

extension PeerCommand {
    /// `hp-sync peer rm NAME`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Stop trusting a peer.")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The peer's name.", completion: PeerCompletion.kind) var name: String

        func run() throws {
            let store = try options.openStore(blindAllowed: true)
            try store.removePeer(named: name)
            Output.write("removed peer \(name)\n")
        }
    }
}

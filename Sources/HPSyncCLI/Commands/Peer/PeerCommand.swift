import ArgumentParser

/// `hp-sync peer`: groups the peer subcommands.
struct PeerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peer", abstract: "Manage the peers this node trusts.",
        subcommands: [
            Add.self, Join.self, List.self, Set.self,
            Remove.self,
        ])
}

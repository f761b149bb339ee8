import ArgumentParser

/// The root command: lists the subcommands.
public struct HPSyncCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hp-sync",
        abstract: "Replicate a home inventory between machines over TLS.",
        subcommands: []
    )

    public init() {}
}

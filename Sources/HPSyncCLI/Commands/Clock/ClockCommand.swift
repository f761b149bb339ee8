import ArgumentParser

/// `hp-sync clock`: this machine's clock against the store's high-water mark, and the recovery
/// for a node whose clock ran ahead and was corrected (README "Clocks").
struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Show this node's clock and high-water mark; `clock reset --yes` brings a mark left ahead back.",
        subcommands: [Show.self, Reset.self], defaultSubcommand: Show.self)
}

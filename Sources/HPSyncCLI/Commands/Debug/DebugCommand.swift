import ArgumentParser

/// `hp-sync debug`: hidden tools for benchmarks and diagnosis.
struct DebugCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug", abstract: "Diagnostic tools.", shouldDisplay: false,
        subcommands: [Changes.self])
}

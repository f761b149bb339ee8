import ArgumentParser

/// `hp-sync exit-codes` (also `hp-sync help exit-codes`): the documented exit status table.
struct ExitCodesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exit-codes", abstract: "Print the table of exit codes, for scripts and monitoring.",
        discussion: "Exit codes:\n\n" + ExitCodesCommand.table)

    static var table: String {
        ExitStatus.allCases.map { "  \(String($0.rawValue).leftPadded(to: 2, with: " "))  \($0.meaning)" }
            .joined(separator: "\n")
    }

    @Flag(help: "Print the table as Markdown (as in the README).") var markdown = false

    func run() throws {
        Output.write(markdown ? ExitStatus.markdownTable : Self.table + "\n")
    }
}

import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine

/// The root command: lists the subcommands.
public struct HPSyncCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "hp-sync",
        abstract: "Replicate a home inventory between machines over TLS.",
        version: VersionText.full,
        subcommands: [
            InitCommand.self, AddCommand.self, ListCommand.self, ShowCommand.self, EditCommand.self,
            RemoveCommand.self, ImageCommand.self, ExportCommand.self, ImportCommand.self, ImportHomepwnerCommand.self,
            ExportHomepwnerCommand.self, VerifyCommand.self, TrashCommand.self, GCCommand.self,
            StatusCommand.self, ConflictsCommand.self, ClockCommand.self, IDCommand.self, PeerCommand.self, InviteCommand.self,
            KeyCommand.self,
            ServeCommand.self,
            PullCommand.self,
            PushCommand.self, SyncCommand.self, WebCommand.self, ExitCodesCommand.self, DebugCommand.self,
        ]
    )

    public init() {}

    /// Parses the command line, runs the command and exits with a documented `ExitStatus`;
    /// errors are printed on stderr as `hp-sync: error: ...`.
    public static func runAndExit(_ arguments: [String]? = nil) -> Never {
        OpenSSLProcess.keepStateAtExit()
        MemoryArenas.cap()
        let arguments = GlobalArguments.relocated(
            arguments ?? Array(CommandLine.arguments.dropFirst()), root: HPSyncCommand.self)
        if let shell = CompletionScript.requested(arguments) {
            Output.write(CompletionScript.script(for: shell) + "\n")
            Foundation.exit(ExitStatus.ok.rawValue)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Foundation.exit(ExitStatus.ok.rawValue)
        } catch {
            let status = report(error)
            // Codes below 64 mean the command did its work (its JSON is out already).
            if status >= ExitStatus.usage.rawValue, Output.wantsJSON(arguments) { Output.jsonError(code: status) }
            Foundation.exit(status)
        }
    }

    /// Prints `error` the way users expect and returns the exit status.
    static func report(_ error: any Error) -> Int32 {
        if let warning = error as? CompletedWithWarnings {
            Output.warning("\(warning)")
            return ExitStatus.completedWithWarnings.rawValue
        }
        if let status = ExitStatus.of(error) {
            // Exit 3 means the work was done: what is left to say is a warning, not an error.
            if status == .completedWithWarnings {
                Output.warning("\(error)")
            } else {
                Output.error("\(error)")
            }
            return status.rawValue
        }
        let code = exitCode(for: error)
        if code == .success {
            // --help and --version.
            Output.write(fullMessage(for: error) + "\n")
            return ExitStatus.ok.rawValue
        }
        if let exitCode = error as? ExitCode { return exitCode.rawValue }
        guard code == .validationFailure else {
            Output.error("internal error: \(error); please report it")
            return ExitStatus.software.rawValue
        }
        var message = message(for: error)
        if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
        if let hint = AgeText.hint(forUsageMessage: message) { message += ": " + hint }
        Output.error("\(message) (see `hp-sync help`)")
        return ExitStatus.usage.rawValue
    }
}

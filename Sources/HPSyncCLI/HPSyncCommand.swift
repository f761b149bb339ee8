import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncProtocol
import HPSyncStore

#if canImport(Glibc)
    import Glibc
#endif

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
            AttachedValues.split(arguments ?? Array(CommandLine.arguments.dropFirst())), root: HPSyncCommand.self)
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

/// What `hp-sync --version` prints: enough to answer "which build is this?" in a bug report.
enum VersionText {
    static var full: String {
        """
        hp-sync \(HPSyncVersion.current)
        protocol versions: \(ProtocolLimits.minVersion) to \(ProtocolLimits.maxVersion)
        commit: \(BuildCommit.hash ?? "unknown (not built by Scripts/install)")
        OpenSSL: \(OpenSSLVersion.runtime)
        SQLite: \(SQLiteVersion.runtime)
        Swift: \(swiftVersion)
        """
    }

    /// The language mode's compiler, to the minor version.
    static var swiftVersion: String {
        #if compiler(>=6.4)
            return "6.4 or later"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "6.0"
        #endif
    }
}

/// Caps glibc's malloc arenas for the whole process.
///
/// glibc gives each thread that allocates an arena of its own (up to eight per core) and keeps
/// the memory freed into it. hp-sync's work hops between threads: GRDB runs each write on
/// whichever Dispatch worker is free, and the image fsyncs run on lanes of their own, so the
/// batches a pull commits end up spread over many arenas, each keeping its share. Measured on an
/// M pull (100,000 items, 2,000 images): 82–106 MB peak RSS uncapped, 73–75 MB with one arena, no
/// CPU difference seen. Two arenas keep contention low for the two threads that allocate most (the
/// receiver and the committer). `MALLOC_ARENA_MAX` in the environment still wins: glibc reads it
/// first and this leaves it alone.
///
/// `mallopt` is declared in `<malloc.h>`, which Swift's Glibc module does not import, so it is
/// looked up by name.
enum MemoryArenas {
    static let limit: Int32 = 2
    /// `M_ARENA_MAX` in glibc's `<malloc.h>`.
    private static let arenaMaxParameter: Int32 = -8

    static func cap() {
        #if canImport(Glibc)
            guard getenv("MALLOC_ARENA_MAX") == nil, let symbol = dlsym(nil, "mallopt") else { return }
            typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
            _ = unsafeBitCast(symbol, to: MallOpt.self)(arenaMaxParameter, limit)
        #endif
    }
}

/// The shell completion scripts, taught the options that may stand before the subcommand.
///
/// `hp-sync --store DIR pull` works because `GlobalArguments` moves `--store DIR` after the
/// subcommand before parsing; the options stay declared on each leaf command, since options
/// declared on the root would be taken by the root wherever they stand. The generated scripts
/// know only what the root declares, so at `hp-sync --store DIR pull <TAB>` they took DIR for
/// the subcommand and offered subcommands. Each script's root step is given the global
/// options here; the completion of peer names then reads `--store` from the whole line
/// (`PeerCompletion`).
enum CompletionScript {
    /// The shell `arguments` ask a script for (`--generate-completion-script [SHELL]`), or nil.
    static func requested(_ arguments: [String]) -> CompletionShell? {
        let option = "--generate-completion-script"
        guard let first = arguments.first else { return nil }
        if first == option, arguments.count == 1 { return CompletionShell.autodetected() }
        if first == option, arguments.count == 2 { return CompletionShell(rawValue: arguments[1]) }
        if first.hasPrefix(option + "="), arguments.count == 1 {
            return CompletionShell(rawValue: String(first.dropFirst(option.count + 1)))
        }
        return nil
    }

    static func script(for shell: CompletionShell) -> String {
        let script = HPSyncCommand.completionScript(for: shell)
        switch shell {
        case .bash: return script.replacingOnce(bashRoot, with: bashRootWithGlobals)
        case .zsh: return script.replacingOnce(zshRoot, with: zshRootWithGlobals)
        case .fish: return script.replacingOnce(fishRoot, with: fishRootWithGlobals)
        default: return script
        }
    }

    private static let bashRoot = """
            local -a repeating_flags=()
            local -a non_repeating_flags=(--version -h --help)
            local -a repeating_options=()
            local -a non_repeating_options=()
            __hp-sync_offer_flags_options 0

        """

    private static let bashRootWithGlobals = """
            local -a repeating_flags=(-v)
            local -a non_repeating_flags=(--version -h --help)
            local -a repeating_options=()
            local -a non_repeating_options=(--store --log-level)
            __hp-sync_offer_flags_options 0

            # Options that may stand before the subcommand (hp-sync --store DIR pull).
            case "${prev}" in
            '--store')
                __hp-sync_add_completions -d
                return
                ;;
            '--log-level')
                return
                ;;
            esac

        """

    private static let zshRoot = """
            local -ar arg_specs=(
                '--version[Show the version.]'

        """

    private static let zshRootWithGlobals = """
            local -ar arg_specs=(
                '--store[The store directory.]:store:_files -/'
                '--log-level[Log level on stderr.]:log-level:'
                '*-v[More detail on stderr.]'
                '--version[Show the version.]'

        """

    private static let fishRoot = """
        case 'hp-sync'
                __hp-sync_parse_subcommand 0 'version' 'h/help'
        """

    private static let fishRootWithGlobals = """
        case 'hp-sync'
                __hp-sync_parse_subcommand 0 'store=' 'log-level=' 'v' 'version' 'h/help'
        """
}

extension String {
    /// The string with the first occurrence of `target` replaced (unchanged without one).
    fileprivate func replacingOnce(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}

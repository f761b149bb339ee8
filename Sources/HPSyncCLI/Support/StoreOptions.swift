import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncStore
import Logging

/// Options every command that touches a store shares.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .customLong("store"),
        help: "The store directory (default: $HP_SYNC_HOME, else the user's data directory).",
        completion: .directory)
    var storePath: String?

    @Option(
        help:
            "Log level on stderr: trace, debug, info, notice, warning, error, critical (default: warning; info for serve)."
    )
    var logLevel: String?

    @Flag(
        name: .customShort("v"),
        help: "More detail on stderr: -v info, -vv debug, -vvv trace (--log-level, if given, decides).")
    var verbosity: Int

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError(
                "unknown log level '\(logLevel)'; use one of trace, debug, info, notice, warning, error, critical")
        }
        if let storePath, storePath.isEmpty { throw ValidationError("--store needs a directory") }
    }

    /// The store directory: --store, else $HP_SYNC_HOME, else the platform's per-user data directory.
    var storeURL: URL { Self.storeURL(storePath) }

    static func storeURL(_ storePath: String?) -> URL {
        if let storePath { return URL(fileURLWithPath: storePath, isDirectory: true) }
        let environment = ProcessInfo.processInfo.environment
        if let home = environment["HP_SYNC_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        let userHome = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory(), isDirectory: true)
        #if os(macOS)
            return userHome.appendingPathComponent("Library/Application Support/hp-sync", isDirectory: true)
        #else
            if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
                return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent(
                    "hp-sync", isDirectory: true)
            }
            return userHome.appendingPathComponent(".local/share/hp-sync", isDirectory: true)
        #endif
    }

    /// A logger writing to stderr at the chosen level (stdout carries results only).
    func makeLogger(default level: Logger.Level = .warning) -> Logger {
        let journal = JournalLogHandler.stderrIsJournal()
        var logger = Logger(label: "hp-sync") {
            journal ? JournalLogHandler(label: $0) as any LogHandler : StreamLogHandler.standardError(label: $0)
        }
        let verbose: [Logger.Level] = [.info, .debug, .trace]
        let asked = verbosity > 0 ? min(verbose[min(verbosity, verbose.count) - 1], level) : level
        logger.logLevel = logLevel.flatMap { Logger.Level(rawValue: $0) } ?? asked
        return logger
    }

    /// This node's TLS identity, kept beside the database.
    func loadIdentity() throws -> NodeIdentity {
        try Self.loadIdentity(at: storeURL)
    }

    /// The identity of the store at `url`; callable from any thread.
    static func loadIdentity(at url: URL) throws -> NodeIdentity {
        // `id` reads only the identity; it tightens the store as every command that opens it does.
        Store.makePrivate(at: url)
        return try NodeIdentity.load(from: url)
    }

    /// Opens the store; it logs through `logger` (the command's, so that its default level
    /// applies), or a logger at the default level. Says on stderr when the store's clock
    /// high-water mark is ahead of this machine's clock, with the command that fixes it.
    /// - Parameter blindAllowed: whether the command works on a blind store (peers, serve,
    ///   verify, status, clock, invitations); every other command refuses one.
    func openStore(logger: Logger? = nil, warnAboutClock: Bool = true, blindAllowed: Bool = false) throws -> Store {
        let store = try Store.open(at: storeURL, logger: logger ?? makeLogger())
        if !blindAllowed, store.isBlind {
            throw StoreError.wrongKindOfStore(
                "the store at \(storeURL.path) is blind: it holds only sealed data that trusted nodes push to it, and has no items to show or change; it only serves them (hp-sync serve)"
            )
        }
        if warnAboutClock, let ahead = try? store.clockAhead() {
            Output.warning(ClockText.warning(ahead, recovery: command("clock reset --yes")))
        }
        return store
    }

    /// `hp-sync ARGUMENTS`, with this run's --store when it gave one: a command to copy.
    func command(_ arguments: String) -> String {
        "hp-sync \(arguments)" + (storePath.map { " --store \($0)" } ?? "")
    }

    /// Takes the store's run lock (or fails at once with the holder's PID), then opens the store.
    /// Lock before opening: opening rolls interrupted image writes forward, which must not race
    /// with a run in flight. Without a store, opening reports that instead.
    func lockAndOpenStore(logger: Logger? = nil, blindAllowed: Bool = false) throws -> (lock: SyncLock?, store: Store) {
        let exists = FileManager.default.fileExists(atPath: storeURL.appendingPathComponent("store.sqlite").path)
        let lock = exists ? try SyncLock.acquire(storeDirectory: storeURL) : nil
        return (lock, try openStore(logger: logger, blindAllowed: blindAllowed))
    }
}

/// Lets the options every store command shares stand before the subcommand, as `git -C DIR`
/// and `restic -r REPO` do: `hp-sync --store DIR list` means `hp-sync list --store DIR`.
///
/// swift-argument-parser parses an option only for the command it is declared on, and these
/// live in each leaf command's `StoreOptions`. So before parsing, the global options found
/// among the leading words (before and between the subcommand names) move to just after the
/// subcommand path, where the leaf command parses them as its own. A global option given again
/// after the subcommand comes later and wins, as the nearer one should.
enum GlobalArguments {
    /// Options that take a value (`--store DIR` or `--store=DIR`).
    static let valued: Set<String> = ["--store", "--log-level"]
    /// Flags that stand alone.
    static let flags: Set<String> = ["-v", "-vv", "-vvv"]

    /// `arguments` (without the program name) with leading global options moved after the
    /// subcommand path; unchanged when there are none or no subcommand follows them.
    static func relocated(_ arguments: [String], root: any ParsableCommand.Type) -> [String] {
        var path: [String] = []
        var globals: [String] = []
        var command = root
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if valued.contains(word), index + 1 < arguments.count {
                globals += [word, arguments[index + 1]]
                index += 2
            } else if flags.contains(word) || valued.contains(where: { word.hasPrefix($0 + "=") }) {
                globals.append(word)
                index += 1
            } else if let sub = subcommand(named: word, of: command) {
                path.append(word)
                command = sub
                index += 1
            } else {
                break
            }
        }
        guard !globals.isEmpty, !path.isEmpty else { return arguments }
        return path + globals + arguments[index...]
    }

    private static func subcommand(named name: String, of command: any ParsableCommand.Type)
        -> (any ParsableCommand.Type)?
    {
        command.configuration.subcommands.first {
            $0.configuration.commandName == name || $0.configuration.aliases.contains(name)
        }
    }
}

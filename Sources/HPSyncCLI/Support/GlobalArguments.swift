import ArgumentParser

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

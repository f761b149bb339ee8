import ArgumentParser

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

import Foundation
import HPSyncTesting
import Testing

@Suite("shell completion of peer names and store directories, run as a binary")
struct CompletionTests {
    @Test func peerNamesComeFromTheStoreTheWordsName() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        try JSONOutputTests.storeWithPeer(runner)
        let third = runner.root.appendingPathComponent("third").path
        try runner.run(["init", "--store", third], withStore: false)
        let thirdID = try runner.run(["id", "--store", third], withStore: false).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try runner.run(["peer", "add", "primary", thirdID]).status == 0)
        let store = runner.store.path
        // What the generated scripts run: hp-sync ---completion COMMAND -- ARG INDEX CURSOR WORDS...
        for (command, argument) in [
            (["pull"], "positional@0"), (["peer", "rm"], "positional@0"), (["status"], "--peer"),
        ] {
            let words = ["hp-sync"] + command + ["--store", store, ""]
            let all = try runner.run(
                ["---completion"] + command + ["--", argument, "\(words.count - 1)", "0"] + words, withStore: false)
            #expect(all.text.split(separator: "\n") == ["backup", "primary"], "\(command): \(all.text) \(all.stderr)")
        }
        let words = ["hp-sync", "sync", "--store=\(store)", "pr"]
        let some = try runner.run(["---completion", "sync", "--", "positional@0", "3", "2"] + words, withStore: false)
        #expect(some.text == "primary\n", "\(some.stderr)")
        // No store there: no names, no error.
        let none = try runner.run(
            [
                "---completion", "pull", "--", "positional@0", "4", "0", "hp-sync", "pull", "--store", "/nonexistent",
                "",
            ],
            withStore: false)
        #expect(none.status == 0 && none.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    /// What bash offers at the end of `line` (words split at spaces, the last one being typed),
    /// with the script hp-sync generates, as bash's programmable completion would call it.
    static func bashCompletions(_ line: [String], runner: BinaryRunner) throws -> [String] {
        let script = try runner.run(["--generate-completion-script", "bash"], withStore: false).stdout
        let file = try runner.file("hp-sync.bash", Array(script))
        let words = [runner.binary.path] + line
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let commandLine = words.joined(separator: " ")
        let previous = words[words.count - 2]
        let program = """
            source '\(file.path)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            COMP_LINE='\(commandLine)'; COMP_POINT=${#COMP_LINE}
            _hp-sync hp-sync '\(words[words.count - 1])' '\(previous)'
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "HP_SYNC_HOME")
        let output = try RunningTool(["/bin/bash", "-c", program], environment: environment, input: nil)
            .finish(timeout: .infinity)
        try #require(output.status == 0, "\(output.stderr)")
        return String(decoding: output.stdoutData, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// `--store DIR` may stand before the subcommand (`GlobalArguments`): the script must not
    /// take DIR for the subcommand, and the peers are those of DIR's store.
    @Test func bashCompletesPeersWhenTheStoreStandsBeforeTheSubcommand() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        try JSONOutputTests.storeWithPeer(runner)
        let store = runner.store.path
        for line in [
            ["--store", store, "pull", ""], ["pull", "--store", store, ""], ["-v", "--store", store, "sync", "b"],
            ["--store", store, "peer", "rm", ""], ["--log-level", "info", "--store", store, "status", "--peer", ""],
        ] {
            #expect(try Self.bashCompletions(line, runner: runner) == ["backup"], "\(line)")
        }
        let directories = try Self.bashCompletions(["--store", runner.root.path + "/st"], runner: runner)
        #expect(directories == [store], "the store option completes directories before the subcommand too")
        #expect(try Self.bashCompletions(["pu"], runner: runner) == ["pull", "push"])
    }

    @Test func scriptsCompleteDirectoriesForStoreAndPeersForSync() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let bash = try runner.run(["--generate-completion-script", "bash"], withStore: false).text
        #expect(bash.contains("'--store')\n        __hp-sync_add_completions -d"))
        #expect(bash.contains("---completion pull -- positional@0"))
        #expect(bash.contains("---completion peer set -- positional@0"))
        let zsh = try runner.run(["--generate-completion-script", "zsh"], withStore: false).text
        #expect(zsh.contains("---completion status -- --peer"))
        // The root steps know the options that may stand before the subcommand (bash: above).
        #expect(zsh.contains("arg_specs=(\n        '--store[The store directory.]:store:_files -/'"))
        let fish = try runner.run(["--generate-completion-script", "fish"], withStore: false).text
        #expect(fish.contains("case 'hp-sync'\n        __hp-sync_parse_subcommand 0 'store=' 'log-level=' 'v'"))
    }
}

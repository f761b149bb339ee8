import Foundation
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

    @Test func scriptsCompleteDirectoriesForStoreAndPeersForSync() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let bash = try runner.run(["--generate-completion-script", "bash"], withStore: false).text
        #expect(bash.contains("'--store')\n        __hp-sync_add_completions -d"))
        #expect(bash.contains("---completion pull -- positional@0"))
        #expect(bash.contains("---completion peer set -- positional@0"))
        let zsh = try runner.run(["--generate-completion-script", "zsh"], withStore: false).text
        #expect(zsh.contains("---completion status -- --peer"))
    }
}

import Foundation
import HPSyncTesting
import Testing

/// Issue 36 with real processes: the laptop serves, the desktop syncs with it (pull, then push).
@Suite(.serialized) struct FieldMergeCommandTests {
    func conflicts(_ runner: BinaryRunner) throws -> [[String: Any]] {
        let result = try runner.run(["conflicts", "--json"])
        try #require(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]])
    }

    func openConflicts(_ runner: BinaryRunner) throws -> Int? {
        let status = try runner.run(["status", "--json"])
        return (try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])?["conflicts"] as? Int
    }

    @Test func editsOfTwoFieldsSurviveAndAClashIsShownUntilAnEditResolvesIt() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let (laptop, desktop) = (pair.primary, pair.backup)
        let added = try laptop.run(["add", "--name", "Guitar", "--value", "0"])
        let key = added.text.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(added.status == 0)
        try laptop.run(["peer", "add", "desktop", pair.backupID, "--allow", "read-write"])
        let server = try ServeProcess(laptop)
        defer { _ = server.stop() }
        try desktop.run(["peer", "add", "laptop", pair.primaryID, "--address", server.address])
        try #require(try desktop.run(["pull", "laptop"]).status == 0)

        // The laptop renames the guitar while the desktop sets its value.
        try #require(try laptop.run(["edit", key, "--name", "Fender Stratocaster"]).status == 0)
        try #require(try desktop.run(["edit", key, "--value", "1200"]).status == 0)
        let synced = try desktop.run(["sync", "laptop"])
        #expect(synced.status == 0, "\(synced.stderr)")
        for node in [laptop, desktop] {
            let shown = try node.run(["show", key]).text
            #expect(shown.contains("Fender Stratocaster"), "\(shown)")
            #expect(shown.contains("1200"), "\(shown)")
            #expect(try conflicts(node).isEmpty)
        }

        // Both rename it: the later name wins on both, the other is listed on both.
        try #require(try laptop.run(["edit", key, "--name", "Strat"]).status == 0)
        try #require(try desktop.run(["edit", key, "--name", "Telecaster"]).status == 0)
        #expect(try desktop.run(["sync", "laptop"]).status == 0)
        var kept: String?
        for node in [laptop, desktop] {
            let listed = try conflicts(node)
            #expect(listed.count == 1)
            #expect(listed.first?["field"] as? String == "name")
            #expect(listed.first?["key"] as? String == key)
            let pair = [listed.first?["kept"], listed.first?["losing"]].map {
                ($0 as? [String: Any])?["value"] as? String
            }
            #expect(Set(pair.compactMap { $0 }) == ["Strat", "Telecaster"])
            kept = kept ?? (listed.first?["kept"] as? [String: Any])?["value"] as? String
            #expect((listed.first?["kept"] as? [String: Any])?["value"] as? String == kept)
            #expect(try openConflicts(node) == 1)
        }
        let table = try laptop.run(["conflicts"]).text
        #expect(table.contains("Strat") && table.contains("Telecaster") && table.contains(key), "\(table)")

        // An edit of the name on either node resolves it everywhere after the next syncs.
        try #require(try laptop.run(["edit", key, "--name", "Strat"]).status == 0)
        #expect(try conflicts(laptop).isEmpty)
        #expect(try desktop.run(["sync", "laptop"]).status == 0)
        for node in [laptop, desktop] {
            #expect(try conflicts(node).isEmpty)
            #expect(try openConflicts(node) == 0)
            #expect(try node.run(["show", key]).text.contains("Strat"))
            #expect(try node.run(["verify"]).status == 0)
        }
    }
}

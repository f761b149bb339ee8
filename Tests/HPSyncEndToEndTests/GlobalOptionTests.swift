import Foundation
import HPSyncTesting
import Testing

@Suite("global options before or after the subcommand, run as a binary")
struct GlobalOptionTests {
    @Test func storeAndLogLevelBeforeTheSubcommand() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let store = runner.store.path
        let created = try runner.run(["--store", store, "init"], withStore: false)
        #expect(created.status == 0, "\(created.stderr)")
        let added = try runner.run(["--store=\(store)", "add", "--name", "Lamp"], withStore: false)
        #expect(added.status == 0, "\(added.stderr)")
        let listed = try runner.run(["--log-level", "error", "--store", store, "list"], withStore: false)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.text.contains("Lamp"))
        // Between the group and its subcommand, as in `git remote -v show`.
        let peers = try runner.run(["peer", "--store", store, "list"], withStore: false)
        #expect(peers.status == 0, "\(peers.stderr)")
    }

    @Test func theOptionNearerTheCommandWins() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        try runner.run(["add", "--name", "Lamp"])
        let elsewhere = runner.root.appendingPathComponent("elsewhere").path
        let listed = try runner.run(["--store", elsewhere, "list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.text.contains("Lamp"))
        let missing = try runner.run(["--store", runner.store.path, "list", "--store", elsewhere], withStore: false)
        #expect(missing.status == 66)
    }

    @Test func aBadGlobalOptionIsAUsageError() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let result = try runner.run(["--log-level", "loud", "list"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown log level 'loud'"))
    }
}

@Suite("--version, run as a binary")
struct VersionTests {
    @Test func versionNamesTheProtocolsCommitAndLibraries() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let result = try runner.run(["--version"], withStore: false)
        #expect(result.status == 0)
        let lines = result.text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("hp-sync ") == true)
        #expect(lines.contains { $0.hasPrefix("protocol versions: 1 to ") })
        #expect(lines.contains { $0.hasPrefix("commit: ") })
        #expect(lines.contains { $0.hasPrefix("OpenSSL: OpenSSL 3") })
        #expect(lines.contains { $0.hasPrefix("SQLite: 3.") })
        #expect(lines.contains { $0.hasPrefix("Swift: 6.") })
    }
}

@Suite("peer set, run as a binary")
struct PeerSetTests {
    @Test func peerSetChangesAddressAndPermissionInPlace() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        _ = try pair.primary.addItems(1)
        let server = try pair.serve()
        let (primary, backup) = (pair.primary, pair.backup)
        #expect(try backup.run(["pull", "primary"]).status == 0)
        // A read-only backup cannot push; allowed read-write in place, it can.
        #expect(try backup.run(["push", "primary", "--quiet"]).status == 77)
        let allowed = try primary.run(["peer", "set", "backup", "--allow", "read-write"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.text.contains("read-write"))
        #expect(try backup.run(["push", "primary", "--quiet"]).status == 0)
        // A new address keeps the checkpoint and history: the next pull has nothing to fetch.
        let moved = try backup.run(["peer", "set", "primary", "--address", server.address])
        #expect(moved.status == 0, "\(moved.stderr)")
        let pulled = try backup.run(["pull", "primary", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: pulled.stdout) as? [String: Any])
        #expect(report["insertedCount"] as? Int == 0)
        #expect(try backup.run(["status"]).text.contains("last pull:"))
        let cleared = try backup.run(["peer", "set", "primary", "--clear-address"])
        #expect(cleared.text.contains("no address"))
        // The exit code of an unknown peer name is helper B's rule (issue 13); it is a failure.
        let unknown = try backup.run(["peer", "set", "nobody", "--allow", "read"])
        #expect(unknown.status >= 64 && unknown.stderr.contains("nobody"))
        #expect(try backup.run(["peer", "set", "primary"]).status == 64)
    }
}

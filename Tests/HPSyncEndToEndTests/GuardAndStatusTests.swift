import Foundation
import HPSyncTesting
import Testing

@Suite("--max-delete alone, status --check on a server, run as a binary")
struct GuardAndStatusTests {
    @Test func maxDeleteGivenAloneAllowsThatMany() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let keys = try pair.primary.addItems(12)
        try pair.serve()
        let (primary, backup) = (pair.primary, pair.backup)
        #expect(try backup.run(["pull", "primary"]).status == 0)
        #expect(try primary.run(["rm"] + keys).status == 0)
        let refused = try backup.run(["pull", "primary", "--quiet"])
        #expect(refused.status == 80)
        #expect(refused.stderr.contains("--max-delete 12`") && refused.stderr.contains("--allow-mass-delete`"))
        #expect(try backup.run(["pull", "primary", "--max-delete", "11"]).status == 80)
        let allowed = try backup.run(["pull", "primary", "--max-delete", "20"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.text.contains("12 deleted"))
    }

    @Test func aServerCountsAPeersPullAsItsSync() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        _ = try pair.primary.addItems(2)
        let server = try pair.serve()
        let (primary, backup) = (pair.primary, pair.backup)
        let never = try primary.run(["status", "--check", "1h", "--peer", "backup"])
        #expect(never.status == 1)
        #expect(try backup.run(["pull", "primary"]).status == 0)
        // The server records the session when it ends, after the client may have exited: wait
        // for the line it logs once it has.
        #expect(server.waitForSessionDone(peer: "backup"), "the server logged no end of the session")
        let checked = try primary.run(["status", "--check", "1h", "--peer", "backup"])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(!checked.text.contains("never synced"))
    }
}

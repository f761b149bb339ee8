import Foundation
import HPSyncTesting
import Testing

@Suite("--json on every command that prints data, run as a binary")
struct JSONOutputTests {
    static func object(_ result: BinaryRunner.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.text)")
    }

    static func array(_ result: BinaryRunner.Result) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.text)")
    }

    /// Makes the runner's store and a second one, lists the second as peer `backup` with an
    /// address (so `status --check` checks it) and returns its node ID.
    @discardableResult
    static func storeWithPeer(_ runner: BinaryRunner) throws -> String {
        try runner.run(["init"])
        let other = runner.root.appendingPathComponent("other").path
        try runner.run(["init", "--store", other], withStore: false)
        let otherID = try runner.run(["id", "--store", other], withStore: false).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try runner.run(["peer", "add", "backup", otherID, "--address", "127.0.0.1:1"]).status == 0)
        return otherID
    }

    @Test func dataCommandsPrintJSON() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let otherID = try Self.storeWithPeer(runner)
        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "Camera", "--value", "350", "--image", image.path]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)

        let status = try Self.object(try runner.run(["status", "--json"]))
        #expect(status["items"] as? Int == 1 && status["images"] as? Int == 1)
        let peers = try #require(status["peers"] as? [[String: Any]])
        #expect(peers.first?["name"] as? String == "backup")
        #expect(peers.first?["lastSuccess"] == nil)  // never: fields without a value are left out

        let show = try Self.object(try runner.run(["show", String(key.prefix(8)), "--json"]))
        #expect(show["key"] as? String == key && show["valueInDollars"] as? Int == 350)

        let verify = try Self.object(try runner.run(["verify", "--json"]))
        #expect(verify["clean"] as? Bool == true && verify["itemsChecked"] as? Int == 1)

        let peerList = try Self.array(try runner.run(["peer", "list", "--json"]))
        #expect(peerList.first?["nodeID"] as? String == otherID && peerList.first?["allow"] as? String == "read")

        #expect(try Self.array(try runner.run(["trash", "list", "--json"])).isEmpty)

        #expect(try runner.run(["invite", "--address", "127.0.0.1"]).status == 0)
        let invitations = try Self.array(try runner.run(["invite", "list", "--json"]))
        #expect(invitations.count == 1 && invitations.first?["status"] as? String == "pending")

        try runner.run(["peer", "rm", "backup"])
        try runner.run(["rm", key])
        let gc = try Self.object(try runner.later(["gc", "--older-than", "1s", "--dry-run", "--json"]))
        #expect(gc["dryRun"] as? Bool == true && gc["dropped"] as? Int == 1)
    }

    @Test func aCheckThatFindsProblemsPrintsOneDocument() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        try Self.storeWithPeer(runner)
        let stale = try runner.run(["status", "--check", "1h", "--json"])
        #expect(stale.status == 1)
        let check = try #require(try Self.object(stale)["check"] as? [String: Any])
        #expect(check["maxAgeSeconds"] as? Int == 3600)
        #expect((check["stale"] as? [String])?.count == 1)

        let image = try runner.file("cam.jpg", Images.jpeg)
        let key = try runner.run(["add", "--name", "Camera", "--image", image.path]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(at: runner.store.appendingPathComponent("images/\(key)"))
        let verify = try runner.run(["verify", "--json"])
        #expect(verify.status == 1)
        #expect(try Self.object(verify)["clean"] as? Bool == false)
    }

    @Test func aFailedCommandPrintsAJSONError() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let failed = try runner.run(["status", "--json"])
        #expect(failed.status == 66)
        #expect(failed.stderr.hasPrefix("hp-sync: error: no hp-sync store"))
        let error = try #require(try Self.object(failed)["error"] as? [String: Any])
        #expect(error["code"] as? Int == 66)
        #expect((error["message"] as? String)?.hasPrefix("no hp-sync store") == true)
        let usage = try runner.run(["list", "--json", "--sort", "nonsense"])
        #expect(usage.status == 64)
        #expect((try Self.object(usage)["error"] as? [String: Any])?["code"] as? Int == 64)
        // Without --json, stdout stays empty.
        #expect(try runner.run(["status"]).stdout.isEmpty)
    }
}

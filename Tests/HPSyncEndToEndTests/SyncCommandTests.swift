import Foundation
import HPSyncTesting
import Testing

@Suite(.serialized) struct SyncCommandTests {
    @Test func pullPushAndSyncThroughTheBinary() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let photo = try pair.primary.file("photo.jpg", Images.jpeg + Array(repeating: 7, count: 5000))
        let added = try pair.primary.run(["add", "--name", "Couch", "--value", "500", "--image", photo.path])
        let key = added.text.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(added.status == 0)
        let server = try pair.serve(allow: "read-write")

        let pulled = try pair.backup.run(["pull", "primary"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.text.hasPrefix("pulled from primary: 1 inserted, 0 updated, 0 deleted, 1 image (5.0 KB) in "))
        #expect(try pair.backup.run(["show", key]).text.contains("Couch"))
        #expect(try pair.backup.run(["verify"]).status == 0)

        let again = try pair.backup.run(["pull", "primary", "--json"])
        let json = try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any]
        #expect(json?["manifestEntries"] as? Int == 0)
        #expect(json?["recordsTransferred"] as? Int == 0)

        try pair.backup.run(["edit", key, "--name", "Old couch"])
        let synced = try pair.backup.run(["sync", "primary"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.text.contains("pushed to primary: 0 inserted, 1 updated, 0 deleted, 0 images"))
        #expect(try pair.primary.run(["show", key]).text.contains("Old couch"))

        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(log.contains("session done"))
        #expect(log.contains("peer=backup"))
    }

    @Test func dryRunListsAndWritesNothing() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let key = try pair.primary.run(["add", "--name", "Lamp"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        try pair.serve()
        let dry = try pair.backup.run(["pull", "primary", "--dry-run"])
        #expect(dry.status == 0)
        #expect(dry.text.contains("insert \(key)"))
        #expect(dry.text.contains("dry run"))
        #expect(try pair.backup.run(["list"]).text.contains(key) == false)
    }

    @Test func unknownServerExits77WithTheCommandToTrustIt() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.primary.run(["peer", "add", "backup", pair.backupID])
        let server = try pair.start(pair.primary)
        let result = try pair.backup.run(["pull", server.address])
        #expect(result.status == 77)
        #expect(result.stderr.hasPrefix("hp-sync: error: the server at \(server.address) is not a known peer"))
        #expect(result.stderr.contains("hp-sync peer add NAME \(pair.primaryID) --address \(server.address)"))
    }

    @Test func unknownClientAndReadOnlyPushExit77() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        let server = try pair.start(pair.primary)
        try pair.backup.run(["peer", "add", "primary", pair.primaryID, "--address", server.address])
        let unknown = try pair.backup.run(["pull", "primary"])
        #expect(unknown.status == 77)
        #expect(unknown.stderr.contains("ERROR_NOT_AUTHORIZED"))
        #expect(unknown.stderr.contains(pair.backupID))

        try pair.primary.run(["peer", "add", "backup", pair.backupID])
        try pair.backup.run(["add", "--name", "Mine"])
        let push = try pair.backup.run(["push", "primary"])
        #expect(push.status == 77)
        #expect(push.stderr.contains("not authorized to push"))
        // Regression (issue 35 §4): the hint was `peer rm` then `peer add`, which discards the
        // peer's history; the hint's own command must work and keep it.
        #expect(push.stderr.contains("hp-sync peer set backup --allow read-write"), "\(push.stderr)")
        #expect(!push.stderr.contains("peer rm"))
        #expect(try pair.primary.run(["peer", "set", "backup", "--allow", "read-write"]).status == 0)
        let allowed = try pair.backup.run(["push", "primary"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    /// Regression (issue 35 §4): the hint for a peer without an address was `peer rm` then
    /// `peer add`, which discards its history; `peer set` gives it one in place.
    @Test func aPeerWithoutAnAddressIsToldToSetOne() throws {
        let pair = try Pair()
        defer { pair.cleanUp() }
        try pair.backup.run(["peer", "add", "primary", pair.primaryID])
        let pulled = try pair.backup.run(["pull", "primary"])
        #expect(pulled.status == 64, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("hp-sync peer set primary --address HOST[:PORT]"), "\(pulled.stderr)")
        #expect(!pulled.stderr.contains("peer rm"))
    }

    @Test func unreachablePeerExits69() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        try runner.run(["peer", "add", "gone", NodeIDFixture.any, "--address", "127.0.0.1:1"])
        let result = try runner.run(["pull", "gone", "--connect-timeout", "2s"])
        #expect(result.status == 69)
        #expect(result.stderr.hasPrefix("hp-sync: error: "))
    }

    /// The identity is read on another thread while the store opens (session 12); its error
    /// still reaches the user as it did: exit 66, naming the missing key.
    @Test func aPullFromAStoreWithoutItsIdentityExits66NamingTheKey() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        try FileManager.default.removeItem(at: runner.store.appendingPathComponent("identity"))
        let result = try runner.run(["pull", "primary"])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("no node identity at"), "\(result.stderr)")
        #expect(result.stderr.contains("identity/key.pem"), "\(result.stderr)")
    }

    @Test func initWritesAPrivateKeyAndNeverPrintsIt() throws {
        let runner = try BinaryRunner()
        defer { runner.cleanUp() }
        let result = try runner.run(["init"])
        #expect(!result.text.contains("PRIVATE KEY"))
        let attributes = try FileManager.default.attributesOfItem(
            atPath: runner.store.appendingPathComponent("identity/key.pem").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let id = try runner.nodeID()
        #expect(result.text.contains(id))
    }
}

enum NodeIDFixture {
    /// A valid node ID no test server has.
    static let any = "P7ESRQB-YW4C5NM-MBR4YPJ-XG7SASR-LUF3MAO-WVLR6W2-PBDW5R7-7UUSYQR"
}
